//! Secret redaction of agent output before anything is stored: common token shapes
//! (`sk-…` API keys, GitHub `ghp_…`-style tokens, AWS access key ids and secret keys,
//! `Authorization:` header values) are replaced by a `[REDACTED]` marker that keeps the
//! token's kind readable.
//!
//! A hand-written scanner over `&str`, no state and no I/O; callers decide what to redact
//! (the daemon: raw output, results and failure reasons). The replacement never contains
//! JSON metacharacters, so redacting serialized JSON keeps it valid.

use std::borrow::Cow;

/// The marker a secret is replaced by (after its kind prefix).
pub(crate) const MARKER: &str = "[REDACTED]";

/// Token prefixes, each with the minimum body length that makes it a secret.
const PREFIXED: &[(&str, usize)] = &[
    ("sk-", 16),
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("github_pat_", 20),
    ("xoxb-", 16),
    ("xoxp-", 16),
];

/// Key names whose value is a secret (`name = value`, `name: value`, `"name": "value"`).
const SECRET_KEYS: &[&str] = &["aws_secret_access_key", "authorization"];
/// How AWS access key ids start; 16 upper-case letters or digits follow.
const AWS_KEY_ID_STARTS: [&[u8]; 2] = [b"AKIA", b"ASIA"];

/// The bytes a secret can start with: most words start with none of them, and a word
/// that does not is passed over without comparing it to each shape (the daemon redacts
/// every line an agent prints and the whole output again as the job settles).
const STARTS: [bool; 256] = {
    let mut starts = [false; 256];
    let mut i = 0;
    while i < PREFIXED.len() {
        starts[PREFIXED[i].0.as_bytes()[0] as usize] = true;
        i += 1;
    }
    let mut k = 0;
    while k < SECRET_KEYS.len() {
        let first = SECRET_KEYS[k].as_bytes()[0];
        starts[first.to_ascii_lowercase() as usize] = true;
        starts[first.to_ascii_uppercase() as usize] = true;
        k += 1;
    }
    let mut a = 0;
    while a < AWS_KEY_ID_STARTS.len() {
        starts[AWS_KEY_ID_STARTS[a][0] as usize] = true;
        a += 1;
    }
    starts
};

fn is_token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-' || c == b'_'
}

/// Replaces every secret in `text`; borrows when there is none.
pub fn redact(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let at_boundary = i == 0 || !is_token_char(bytes[i - 1]);
        let hit = if at_boundary {
            secret_at(text, i)
        } else {
            None
        };
        match hit {
            Some((keep, end)) => {
                let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                o.push_str(&text[copied..i + keep]);
                o.push_str(MARKER);
                copied = end;
                i = end;
            }
            None => i += 1,
        }
    }
    match out {
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
        None => Cow::Borrowed(text),
    }
}

/// A secret starting at byte `i`: (bytes of it to keep as a readable prefix, its end).
fn secret_at(text: &str, i: usize) -> Option<(usize, usize)> {
    let rest = &text.as_bytes()[i..];
    if !STARTS[rest[0] as usize] {
        return None;
    }
    for (prefix, min) in PREFIXED {
        if rest.starts_with(prefix.as_bytes()) {
            let body = rest[prefix.len()..]
                .iter()
                .take_while(|c| is_token_char(**c))
                .count();
            if body >= *min {
                return Some((prefix.len(), i + prefix.len() + body));
            }
        }
    }
    if AWS_KEY_ID_STARTS.iter().any(|s| rest.starts_with(s)) && rest.len() >= 20 {
        let body = &rest[4..20];
        let ends = rest.get(20).is_none_or(|c| !is_token_char(*c));
        if ends
            && body
                .iter()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        {
            return Some((4, i + 20));
        }
    }
    for key in SECRET_KEYS {
        if rest.len() >= key.len() && rest[..key.len()].eq_ignore_ascii_case(key.as_bytes()) {
            return value_after_key(rest, key.len()).map(|(keep, end)| (keep, i + end));
        }
    }
    None
}

/// After a secret key name: skip `"`, spaces and one `:` or `=`, then the value runs to the
/// end of the line, a quote or a backslash (an escaped newline in JSON text).
fn value_after_key(rest: &[u8], key_len: usize) -> Option<(usize, usize)> {
    let mut j = key_len;
    while rest.get(j).is_some_and(|c| *c == b'"' || *c == b' ') {
        j += 1;
    }
    if !matches!(rest.get(j), Some(b':' | b'=')) {
        return None;
    }
    j += 1;
    while rest.get(j).is_some_and(|c| *c == b' ' || *c == b'"') {
        j += 1;
    }
    let value = rest[j..]
        .iter()
        .take_while(|c| !matches!(c, b'\n' | b'\r' | b'"' | b'\\'))
        .count();
    let trimmed = rest[j..j + value]
        .iter()
        .rposition(|c| *c != b' ')
        .map_or(0, |p| p + 1);
    (trimmed > 0).then_some((j, j + trimmed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_token_shape_is_replaced_and_its_kind_kept() {
        let cases = [
            (
                "key sk-proj-abcdefghijklmnop1234 ok",
                "key sk-[REDACTED] ok",
            ),
            (
                "token=ghp_0123456789abcdefghijABCDEF done",
                "token=ghp_[REDACTED] done",
            ),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghij",
                "github_pat_[REDACTED]",
            ),
            ("id AKIAIOSFODNN7EXAMPLE here", "id AKIA[REDACTED] here"),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nnext",
                "aws_secret_access_key = [REDACTED]\nnext",
            ),
            (
                "curl -H 'Authorization: Bearer abc.def.ghi' x\nnext",
                "curl -H 'Authorization: [REDACTED]\nnext",
            ),
            (
                r#"{"summary":"sent authorization: Basic dXNlcjpwYXNz\nthen"}"#,
                r#"{"summary":"sent authorization: [REDACTED]\nthen"}"#,
            ),
            (
                r#"{"Authorization": "Bearer t0k3n"}"#,
                r#"{"Authorization": "[REDACTED]"}"#,
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
        }
    }

    #[test]
    fn ordinary_text_is_borrowed_untouched() {
        for text in [
            "ask-gate task-1234567890abcdefghij",
            "sk-short",
            "AKIA lowercase akiaiosfodnn7example",
            "the authorization model is RBAC",
            "ghp_tooshort",
            "",
        ] {
            assert!(matches!(redact(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn redacted_json_stays_valid() {
        let v = serde_json::json!({"s": "a sk-abcdefghijklmnopqrstu b", "h": "Authorization: Bearer x\ny"});
        let text = v.to_string();
        let red = redact(&text);
        let back: serde_json::Value = serde_json::from_str(&red).unwrap();
        assert_eq!(back["s"], "a sk-[REDACTED] b");
        assert_eq!(back["h"], "Authorization: [REDACTED]\ny");
    }
}
