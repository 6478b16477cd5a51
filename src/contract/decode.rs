//! Raw JSON decoding the typed serde path cannot do: objects as ordered key/raw-value
//! entries (so duplicate keys are seen, not silently merged) and the narrative string
//! lists (`changes_made`, `tests_run`, `needs`), whose object elements are canonicalised.
//!
//! Owns the byte-level rules only; what a field means is `validate`'s business.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The JSON type of a raw value, named as error messages name it.
pub fn kind(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'"') => "string",
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// How deep a `gitmoot_result` may nest, the result object itself being level 1: its
/// fields are decoded one by one by a parser that refuses 128 levels of its own.
pub const MAX_DEPTH: usize = 128;

/// Why JSON text that scans as well-formed still cannot be decoded, named for the error
/// line: nesting past [`MAX_DEPTH`] (counting from `depth`, the level `json` sits in) or a
/// `\u` escape that is half of a UTF-16 surrogate pair. One linear pass, no recursion, so
/// any depth is safe to ask about.
pub(crate) fn defect(json: &str, mut depth: usize) -> Option<String> {
    let bytes = json.as_bytes();
    let (mut i, mut in_str) = (0, false);
    while i < bytes.len() {
        match (in_str, bytes[i]) {
            (true, b'\\') if bytes.get(i + 1) == Some(&b'u') => {
                match escape_surrogate(bytes, i) {
                    Ok(len) => i += len,
                    Err(unit) => {
                        return Some(format!(
                            "holds an invalid UTF-16 surrogate (\\u{unit:04x} is not half of a pair)"
                        ));
                    }
                }
                continue;
            }
            (true, b'\\') => i += 1,
            (_, b'"') => in_str = !in_str,
            (false, b'[' | b'{') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(format!("is nested deeper than {MAX_DEPTH} levels"));
                }
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The length of the `\u` escape (or surrogate pair) at `at`; `Err(unit)` names a
/// surrogate that has no partner.
fn escape_surrogate(bytes: &[u8], at: usize) -> Result<usize, u32> {
    let Some(unit) = hex_unit(bytes, at + 2) else {
        // Not four hex digits: the raw decoder refuses such text before it gets here.
        return Ok(2);
    };
    let high = (0xD800..0xDC00).contains(&unit);
    let low_follows = bytes.get(at + 6..at + 8) == Some(&b"\\u"[..])
        && hex_unit(bytes, at + 8).is_some_and(|low| (0xDC00..0xE000).contains(&low));
    match unit {
        _ if high && low_follows => Ok(12),
        0xD800..=0xDFFF => Err(unit),
        _ => Ok(6),
    }
}

/// The four hex digits starting at `at`, as a UTF-16 code unit.
fn hex_unit(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

/// An object's members in the order written, duplicates included.
pub(crate) struct Entries<'a>(pub Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for EntriesVisitor<'a> {
            type Value = Entries<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut out = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    out.push((key, value));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

impl<'a> Entries<'a> {
    /// Decodes a raw object; `None` when the text is not a JSON object.
    pub fn of(raw: &'a RawValue) -> Option<Self> {
        serde_json::from_str(raw.get()).ok()
    }

    /// The first key that appears more than once.
    pub fn duplicate(&self) -> Option<&str> {
        let mut seen = std::collections::HashSet::new();
        self.0
            .iter()
            .map(|(k, _)| k.as_str())
            .find(|k| !seen.insert(*k))
    }
}

/// Decodes a narrative list: strings kept verbatim, `null` as an empty entry, objects as
/// canonical compact JSON. Every bad element is reported, naming `field` and its index.
pub(crate) fn string_list(field: &str, raw: &RawValue) -> Result<Vec<String>, Vec<String>> {
    let elements: Vec<&RawValue> = match kind(raw) {
        "null" => return Ok(Vec::new()),
        "array" => serde_json::from_str(raw.get()).map_err(|e| vec![format!("{field}: {e}")])?,
        other => {
            return Err(vec![format!(
                "gitmoot_result {field} must be an array of strings or objects (got {other})"
            )]);
        }
    };
    let mut out = Vec::with_capacity(elements.len());
    let mut errors = Vec::new();
    for (i, element) in elements.into_iter().enumerate() {
        match kind(element) {
            "null" => out.push(String::new()),
            "string" => match serde_json::from_str::<String>(element.get()) {
                Ok(s) => out.push(s),
                Err(e) => errors.push(format!("gitmoot_result {field}[{i}]: {e}")),
            },
            "object" => match canonical_object(element) {
                Ok(s) => out.push(s),
                Err(key) => errors.push(format!(
                    "gitmoot_result {field}[{i}] has duplicate key {key:?}"
                )),
            },
            other => errors.push(format!(
                "gitmoot_result {field}[{i}] must be a string or an object (got {other})"
            )),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// An object as compact JSON with its top-level keys sorted and each value's bytes kept
/// (only compacted). `Err(key)` names a top-level duplicate.
pub(crate) fn canonical_object(raw: &RawValue) -> Result<String, String> {
    let Some(mut entries) = Entries::of(raw) else {
        return Ok(compact(raw.get()));
    };
    if let Some(key) = entries.duplicate() {
        return Err(key.to_owned());
    }
    entries.0.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::with_capacity(raw.get().len());
    out.push('{');
    for (n, (key, value)) in entries.0.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::Value::String(key.clone()).to_string());
        out.push(':');
        out.push_str(&compact(value.get()));
    }
    out.push('}');
    Ok(out)
}

/// Removes JSON whitespace outside strings; every other byte is kept as written.
pub fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_str, mut esc) = (false, false);
    for c in json.chars() {
        if in_str {
            out.push(c);
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            if c == '"' {
                in_str = true;
            }
            out.push(c);
        }
    }
    out
}

/// Whether a stored list entry says nothing: blank, or JSON whose every value, at any
/// depth, is empty (`""`, `null`, `[]`, `{}`). Numbers and booleans are content.
pub(crate) fn is_content_free(entry: &str) -> bool {
    if entry.trim().is_empty() {
        return true;
    }
    match serde_json::from_str::<serde_json::Value>(entry) {
        Ok(v @ (serde_json::Value::Object(_) | serde_json::Value::Array(_))) => empty_value(&v),
        _ => false,
    }
}

fn empty_value(v: &serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(items) => items.iter().all(empty_value),
        Value::Object(map) => map.values().all(empty_value),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn objects_sort_top_level_keys_and_keep_nested_bytes() {
        let r = raw(r#"{ "z": 1, "a": { "y": 2,  "x": [1, 2], "y": 3 }, "m": "a  b;|&" }"#);
        assert_eq!(
            canonical_object(&r).unwrap(),
            r#"{"a":{"y":2,"x":[1,2],"y":3},"m":"a  b;|&","z":1}"#
        );
    }

    #[test]
    fn top_level_duplicates_are_named() {
        assert_eq!(
            canonical_object(&raw(r#"{"name":"a","name":"b"}"#)),
            Err("name".to_owned())
        );
    }

    #[test]
    fn defects_name_depth_and_unpaired_surrogates_only() {
        let deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert_eq!(
            defect(&deep[1..deep.len() - 1], 1),
            None,
            "128 levels in all"
        );
        assert!(defect(&deep, 1).unwrap().contains("nested deeper than 128"));
        for fine in [
            r#""\ud83d\ude00""#,
            r#""\\ud800""#,
            r#"["\u00e9", "\uDBFF\uDFFF"]"#,
        ] {
            assert_eq!(defect(fine, 1), None, "{fine}");
        }
        for lone in [r#""\ud800""#, r#""\udc00x""#, r#""\ud800\u0041""#] {
            assert!(
                defect(lone, 1)
                    .unwrap()
                    .contains("invalid UTF-16 surrogate"),
                "{lone}"
            );
        }
    }

    #[test]
    fn content_free_entries() {
        for empty in ["", "  ", "{}", r#"{"name":""}"#, r#"{"a":{"b":[null,""]}}"#] {
            assert!(is_content_free(empty), "{empty}");
        }
        for full in [
            "x",
            r#"{"name":"a"}"#,
            r#"{"n":0}"#,
            r#"{"a":{"b":[false]}}"#,
        ] {
            assert!(!is_content_free(full), "{full}");
        }
    }
}
