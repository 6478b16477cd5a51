//! The chat names: a thread's state, a message's kind, who wrote it, and why a tree is
//! linked to a thread.
//!
//! Owns the names and their stored spellings; threads and messages themselves are the
//! library's chat and store rooms'.

use crate::named_enum;

named_enum!(
    /// Open threads take messages; archived ones are kept for audit only.
    ThreadState, "chat thread state",
    unknown(other) => format!("chat thread state {other:?} is not supported"),
    { Open => "open", Archived => "archived" }
);

named_enum!(
    /// The fixed message vocabulary; only `chat` is ever scanned for mentions.
    MessageKind, "chat message kind",
    unknown(other) => format!("chat message kind {other:?} is not supported"),
    {
        Chat => "chat",
        PromotionRequest => "promotion_request",
        JobResult => "job_result",
        System => "system",
    }
);

named_enum!(
    /// Who wrote a message.
    AuthorKind, "chat author kind",
    unknown(other) => format!("chat author kind {other:?} is not supported"),
    { Human => "human", Agent => "agent", System => "system" }
);

named_enum!(
    /// Why a tree is linked to a thread, which decides what its result looks like there.
    LinkPurpose, "chat link purpose",
    unknown(other) => format!("chat link purpose {other:?} is not supported"),
    {
        Promotion => "promotion",
        AutoRespond => "auto_respond",
        MootSeat => "moot_seat",
        AskGate => "ask_gate",
    }
);
