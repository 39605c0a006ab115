//! The public contract of `grafton-auth`, one test binary: dev mode and the admin secret,
//! JWT verification with inline keys, and JWKS (served locally, or from a file).

mod admin;
mod common;
mod issuers;
mod jwks;
mod jwt;
