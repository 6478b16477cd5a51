//! `@name` mention parsing. Pure text rules; resolving names against the registry is the
//! caller's job (`messages::send`).

/// Characters stripped from the end of a mention token (prose punctuation).
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}'];

/// The distinct mentions of `body`, in order of first appearance. A mention is a
/// whitespace-separated token starting with `@`, so e-mail addresses are never mentions.
pub fn parse(body: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in body.split_whitespace() {
        let Some(rest) = token.strip_prefix('@') else {
            continue;
        };
        let name = rest.trim_end_matches(TRAILING).trim();
        if name.is_empty() || out.iter().any(|n| n == name) {
            continue;
        }
        out.push(name.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn mentions_follow_the_token_rules() {
        assert_eq!(
            parse("@codex-b look at this, @ghost too. @codex-b again"),
            ["codex-b", "ghost"]
        );
        assert_eq!(parse("hi @bob, and @alice!?)"), ["bob", "alice"]);
        assert!(parse("mail jerry@example.com or (@foo) \"@bar\"").is_empty());
        assert!(parse("a lone @ and @, are nothing").is_empty());
        assert_eq!(parse("@@x @a.b"), ["@x", "a.b"]);
    }
}
