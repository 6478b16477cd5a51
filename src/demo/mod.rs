//! `gitmoot demo`: a fresh home with scripted agents and a realistic scene.
