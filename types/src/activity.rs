//! The kinds of one activity record (a running agent's step), as the adapters write them,
//! the store keeps them and the stall watch and the control room read them.
//!
//! Owns the names only; reading a runtime's stream into records is the runtime's.

/// What one activity record says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityKind {
    /// The agent said something.
    Message,
    /// The agent asked for a tool.
    ToolCall,
    /// A tool answered.
    ToolResult,
    /// A shell command started.
    Command,
    /// A file was edited or written.
    FileChange,
    /// Token usage (and cost) reported by the runtime.
    Usage,
    /// The runtime reported an error.
    Error,
    /// A line on stderr.
    Stderr,
    /// A plain stdout line (not an event of the runtime's format).
    Output,
    /// The job hit its activity cap; later records were dropped.
    Truncated,
}

impl ActivityKind {
    pub const ALL: [ActivityKind; 10] = [
        Self::Message,
        Self::ToolCall,
        Self::ToolResult,
        Self::Command,
        Self::FileChange,
        Self::Usage,
        Self::Error,
        Self::Stderr,
        Self::Output,
        Self::Truncated,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Message => "message",
            Self::ToolCall => "tool_call",
            Self::ToolResult => "tool_result",
            Self::Command => "command",
            Self::FileChange => "file_change",
            Self::Usage => "usage",
            Self::Error => "error",
            Self::Stderr => "stderr",
            Self::Output => "output",
            Self::Truncated => "truncated",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl std::fmt::Display for ActivityKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
