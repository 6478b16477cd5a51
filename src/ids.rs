//! Identifier generation: root job ids, hex ids, content hashes.
//!
//! Owns randomness and hashing so every id format lives in one place.

use sha2::{Digest, Sha256};

const BASE32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf).expect("the operating system's random source is unavailable");
    buf
}

/// `job-` plus 8 lowercase base32 characters (40 random bits).
pub(crate) fn root_job_id() -> String {
    let bytes = random_bytes::<5>();
    let mut bits: u64 = 0;
    for b in bytes {
        bits = (bits << 8) | u64::from(b);
    }
    let mut out = String::from("job-");
    for i in (0..8).rev() {
        out.push(BASE32[((bits >> (i * 5)) & 31) as usize] as char);
    }
    out
}

/// `n` random bytes as lowercase hex.
pub(crate) fn random_hex(n_bytes: usize) -> String {
    let mut buf = vec![0u8; n_bytes];
    getrandom::fill(&mut buf).expect("the operating system's random source is unavailable");
    hex(&buf)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// A fresh folder under the system's temp dir named `gm-{tag}-` and random hex, for the
/// unit tests that need real files.
#[cfg(test)]
pub(crate) fn scratch_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gm-{tag}-{}", random_hex(4)));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_ids_have_the_documented_shape() {
        let id = root_job_id();
        assert_eq!(id.len(), 12);
        assert!(id.starts_with("job-"));
        assert!(id[4..].bytes().all(|b| BASE32.contains(&b)));
        assert_ne!(root_job_id(), root_job_id());
    }

    #[test]
    fn sha256_matches_a_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
