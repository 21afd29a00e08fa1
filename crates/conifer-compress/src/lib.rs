//! Conifer compression algorithms (under construction).
