//! The gitmoot home: where `gitmoot.db`, `config.toml`, `logs/` and `artifacts/` live.
//!
//! Owns resolution (`--home`, `$GITMOOT_HOME`, `~/.gitmoot`) and the private permissions
//! (folders 0700, the database 0600). Knows nothing of what is inside the files.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
    /// The store's URL when it is not the home's own SQLite file (`--store`,
    /// `$GITMOOT_STORE`, `[store] url`); the store parses it.
    store: Option<String>,
}

impl Home {
    /// Resolves the home from the flag, then `$GITMOOT_HOME`, then `~/.gitmoot`.
    pub fn resolve(flag: Option<&Path>) -> io::Result<Self> {
        let root = match flag {
            Some(p) => p.to_path_buf(),
            None => match std::env::var_os("GITMOOT_HOME").filter(|v| !v.is_empty()) {
                Some(v) => PathBuf::from(v),
                None => std::env::home_dir()
                    .ok_or_else(|| {
                        io::Error::other("cannot find the user's home directory; pass --home")
                    })?
                    .join(".gitmoot"),
            },
        };
        let root = if root.is_absolute() {
            root
        } else {
            std::env::current_dir()?.join(root)
        };
        Ok(Self { root, store: None })
    }

    /// The same home with its store at `url` (None: the home's SQLite file).
    pub fn with_store(self, url: Option<String>) -> Self {
        Self { store: url, ..self }
    }

    pub(crate) fn store_url(&self) -> Option<&str> {
        self.store.as_deref()
    }

    /// Creates the folders (0700) and, when the store is the home's own file, an empty
    /// private database file (0600) if missing.
    pub(crate) fn ensure(&self) -> io::Result<()> {
        for dir in [self.root.clone(), self.logs_dir(), self.artifacts_dir()] {
            if !dir.exists() {
                fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&dir)?;
            }
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))?;
        }
        if self.store.is_some() {
            return Ok(());
        }
        let db = self.db_path();
        if !db.exists() {
            fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&db)?;
        }
        fs::set_permissions(&db, fs::Permissions::from_mode(0o600))?;
        Ok(())
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn db_path(&self) -> PathBuf {
        self.root.join("gitmoot.db")
    }
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    pub(crate) fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }
    pub(crate) fn artifacts_dir(&self) -> PathBuf {
        self.root.join("artifacts")
    }
    /// Where the full artifact body of job `job_id` is kept on disk while its run lives,
    /// under the home's artifacts folder `artifacts` (000:255): the brief a truncated
    /// inline copy in a prompt points at.
    pub(crate) fn brief_path(artifacts: &Path, job_id: &str) -> PathBuf {
        artifacts.join("delegations").join(job_id).join("brief.md")
    }
    pub(crate) fn keymap_path(&self) -> PathBuf {
        self.root.join("keymap.toml")
    }
    /// The control room's `:` line history, one command a line, oldest first.
    pub(crate) fn command_history_path(&self) -> PathBuf {
        self.root.join("command_history")
    }

    pub(crate) fn themes_dir(&self) -> PathBuf {
        self.root.join("themes")
    }
}
