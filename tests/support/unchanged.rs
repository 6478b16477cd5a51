//! What "nothing changed" is checked against: every row of every table of a home's SQLite
//! store, and a git working tree's files, index, HEAD and refs, each as one text to compare
//! before and after a command that promised to change nothing.

use std::path::Path;

use rusqlite::types::ValueRef;

/// Every row of every table of `home`'s store, in a stable order, as text.
pub fn store_rows(home: &Path) -> String {
    let conn = rusqlite::Connection::open(home.join("gitmoot.db")).unwrap();
    let mut tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    tables.retain(|t| !t.starts_with("sqlite_"));
    let mut out = String::new();
    for t in tables {
        out.push_str(&format!("== {t}\n"));
        let mut st = conn.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
        let n = st.column_count();
        let mut rows: Vec<String> = st
            .query_map([], |r| {
                let mut line = String::new();
                for i in 0..n {
                    let v = match r.get_ref(i)? {
                        ValueRef::Null => "NULL".to_string(),
                        ValueRef::Integer(x) => x.to_string(),
                        ValueRef::Real(x) => x.to_string(),
                        ValueRef::Text(x) => format!("{:?}", String::from_utf8_lossy(x)),
                        ValueRef::Blob(x) => format!("blob{x:?}"),
                    };
                    line.push_str(&v);
                    line.push('|');
                }
                Ok(line)
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        rows.sort();
        for r in rows {
            out.push_str(&r);
            out.push('\n');
        }
    }
    out
}

/// A git working tree as it stands: every file's path and bytes (its `.git` left out), the
/// bytes of its index and HEAD, and every ref of the repository with its target. Read
/// without git's optional locks, so reading it refreshes nothing.
pub fn tree_state(dir: &Path) -> String {
    fn walk(dir: &Path, top: bool, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            if top && e.file_name() == ".git" {
                continue;
            }
            let path = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(&path, false, out);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.push(format!("{} {bytes:?}", path.display()));
            }
        }
    }
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("--no-optional-locks")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let mut lines = Vec::new();
    walk(dir, true, &mut lines);
    lines.sort();
    for name in ["index", "HEAD"] {
        let at = git(&["rev-parse", "--path-format=absolute", "--git-path", name]);
        lines.push(format!(
            "{name}: {:?}",
            std::fs::read(at).unwrap_or_default()
        ));
    }
    lines.push(git(&["for-each-ref", "--format=%(refname) %(objectname)"]));
    lines.join("\n")
}
