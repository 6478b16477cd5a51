//! Fuzzes the result locator and decoder: any bytes, as an agent's output.
//!
//! Invariants: `parse` never panics; an accepted result, printed as `result check`
//! prints it, parses back to the same value; the linear brace matcher only reports
//! spans that open with `{` and close with `}`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for (open, close) in gitmoot::contract::locate::balanced_objects(text.as_bytes()) {
        assert!(open < close);
        assert_eq!(text.as_bytes()[open], b'{');
        assert_eq!(text.as_bytes()[close], b'}');
    }
    if let Ok(result) = gitmoot::contract::parse(&text) {
        let printed = gitmoot::contract::to_json(&result);
        assert_eq!(gitmoot::contract::parse(&printed), Ok(result));
    }
});
