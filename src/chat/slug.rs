//! Thread slugs: the stable, topic-path-safe handle (`[a-z0-9]+(-[a-z0-9]+)*`) made from a
//! name. Pure; never re-run on rename.

/// Lowercases, keeps `[a-z0-9]`, turns every other run into one `-` (never leading or
/// trailing). May return an empty string, which callers refuse.
pub(crate) fn slugify(name: &str) -> String {
    let mut out = String::new();
    let mut pending_dash = false;
    for c in name.trim().chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.push(c);
        } else {
            pending_dash = true;
        }
    }
    out
}

/// The ask-gate thread of a job: `job-` + the first 12 hex of sha256(job id).
pub fn job_thread_slug(job_id: &str) -> String {
    format!(
        "job-{}",
        &crate::ids::sha256_hex(job_id.trim().as_bytes())[..12]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_topic_path_safe() {
        assert_eq!(slugify("Release Room!"), "release-room");
        assert_eq!(slugify("a__b"), "a-b");
        assert_eq!(slugify("-x-"), "x");
        assert_eq!(slugify("Ünïcode"), "n-code");
        assert_eq!(slugify("a+b#c/d e"), "a-b-c-d-e");
        assert_eq!(slugify("***"), "");
    }

    #[test]
    fn job_slugs_match_known_hashes() {
        assert_eq!(job_thread_slug("coord-ask"), "job-4283630ea552");
        assert_eq!(job_thread_slug("job-1"), "job-026ab639c21d");
    }
}
