//! The versioned canonical envelope stored with every message: a fixed key order so the
//! bytes are stable for a future cross-machine bridge. Bump `SCHEMA_VERSION` only on a
//! breaking change of the shape.

use serde::Serialize;

use crate::store::chat::{MessageKind, Ref};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Envelope<'a> {
    schema_version: u32,
    kind: &'a str,
    body: &'a str,
    mentions: &'a [String],
    refs: &'a [Ref],
    reply_to: String,
}

/// `{"schema_version":1,"kind":…,"body":…,"mentions":[…],"refs":[…],"reply_to":"…"}`.
pub(crate) fn encode(
    kind: MessageKind,
    body: &str,
    mentions: &[String],
    refs: &[Ref],
    reply_to: Option<i64>,
) -> String {
    serde_json::to_string(&Envelope {
        schema_version: SCHEMA_VERSION,
        kind: kind.as_str(),
        body,
        mentions,
        refs,
        reply_to: reply_to.map(|s| s.to_string()).unwrap_or_default(),
    })
    .expect("an envelope always serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_has_a_fixed_key_order() {
        let refs = [Ref {
            kind: "job".into(),
            origin: "o".into(),
            repo: "a/b".into(),
            id: "job-1".into(),
            url: String::new(),
        }];
        let e = encode(MessageKind::Chat, "hi @x", &["x".into()], &refs, Some(3));
        assert_eq!(
            e,
            r#"{"schema_version":1,"kind":"chat","body":"hi @x","mentions":["x"],"refs":[{"kind":"job","origin":"o","repo":"a/b","id":"job-1","url":""}],"reply_to":"3"}"#
        );
    }
}
