//! Where a store lives, from its URL: the home's SQLite file by default, a SQLite file
//! elsewhere (`sqlite:PATH`), or a PostgreSQL database (`postgres://…`, `postgresql://…`,
//! anything `postgres::Config` accepts in that form).

use std::path::PathBuf;
use std::str::FromStr;

use super::StoreError;
use crate::Invalid;
use crate::home::Home;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    /// Parses a store URL; a bad one is an error naming it (its password hidden).
    pub fn parse(url: &str) -> Result<Self, Invalid> {
        let bad = |why: String| Invalid(format!("store URL {:?}: {why}", redact(url)));
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            postgres::Config::from_str(url).map_err(|e| bad(e.to_string()))?;
            return Ok(Self::Postgres(url.to_string()));
        }
        if let Some(rest) = url.strip_prefix("sqlite:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err(bad("names no file".into()));
            }
            return Ok(Self::Sqlite(PathBuf::from(path)));
        }
        Err(bad(
            "expected postgres://…, postgresql://… or sqlite:PATH".into()
        ))
    }

    /// Where `home`'s store lives: its store URL, else its own SQLite file.
    pub(crate) fn of_home(home: &Home) -> Result<Self, Invalid> {
        match home.store_url() {
            Some(url) => Self::parse(url),
            None => Ok(Self::Sqlite(home.db_path())),
        }
    }

    /// The single-daemon lock of a SQLite store: `<file>.lock` beside the file (a symlink
    /// resolved first), so every home, flag and URL that reaches one file meets one lock on
    /// the file's own filesystem. `None` on PostgreSQL, whose store many daemons share
    /// under leases.
    pub fn daemon_lock(&self) -> Option<PathBuf> {
        let Self::Sqlite(path) = self else {
            return None;
        };
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let mut name = real.file_name()?.to_os_string();
        name.push(".lock");
        Some(real.with_file_name(name))
    }

    /// Refuses a SQLite store whose file is gone while its daemon lock stays
    /// (`StoreError::Vanished`).
    pub(crate) fn refuse_vanished(&self) -> Result<(), StoreError> {
        let Self::Sqlite(path) = self else {
            return Ok(());
        };
        match self.daemon_lock() {
            Some(lock) if !path.exists() && lock.exists() => Err(StoreError::Vanished {
                path: path.clone(),
                lock,
            }),
            _ => Ok(()),
        }
    }

    /// The location as messages name it: a file's path, a URL without its password.
    pub fn display(&self) -> String {
        match self {
            Self::Sqlite(p) => p.display().to_string(),
            Self::Postgres(url) => redact(url),
        }
    }
}

/// `url` with the password of its `user:password@` part replaced.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{scheme}://{user}:***@{host}{tail}")
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::Location;

    #[test]
    fn urls_name_their_backend_and_a_bad_one_is_named_without_its_password() {
        assert_eq!(
            Location::parse("postgres://u:secret@db:5432/moot").unwrap(),
            Location::Postgres("postgres://u:secret@db:5432/moot".into())
        );
        assert_eq!(
            Location::parse("sqlite:///srv/moot.db").unwrap(),
            Location::Sqlite("/srv/moot.db".into())
        );
        let err = Location::parse("mysql://u:secret@db/moot").unwrap_err().0;
        assert!(err.contains("mysql://u:***@db/moot"), "{err}");
        assert!(!err.contains("secret"), "{err}");
        let err = Location::parse("postgres://u:secret@db:notaport/x")
            .unwrap_err()
            .0;
        assert!(err.contains("postgres://u:***@db:notaport/x"), "{err}");
        assert!(
            Location::Postgres("postgresql://a:b@h/d".into()).display() == "postgresql://a:***@h/d"
        );
    }
}
