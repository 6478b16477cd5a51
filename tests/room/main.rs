//! The control room: its executor and loads on real stores (a damaged one too), the room in a real terminal
//! (tmux), the operations and promotion it offers, the screenshots, the demo, and chat end
//! to end.

mod chat_e2e;
mod damaged_store;
mod demo_headless;
mod demo_walk;
mod first_hour_screen;
mod fleet_room;
mod forecast_room;
mod ops_room;
mod promote_room;
mod screenshots;
mod tui_exec;
mod tui_room;
mod tui_tmux;
mod write_room;
