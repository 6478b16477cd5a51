//! `gitmoot demo`: a fresh home with scripted agents and a realistic scene.

pub mod agent;
