//! trybuild cases live in tests/ui; see tests/ui.rs.
