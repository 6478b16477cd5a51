//! Native chat: threads, messages, mentions, inboxes, promotion, answers, memory, moot.
