//! The plug: Faktura's imports (`store`, `pdf`, `mail`, `ratelimit`) implemented inside
//! WebAssembly on WASI alone, so that the service component, composed with it, runs under
//! runtimes that know only WASI (`wasmtime serve`, Spin).
//!
//! The data directory is a preopened directory, `/data` unless `FAKTURA_DATA` names
//! another: the store keeps `faktura.redb` there (`store`: readers side by side with each
//! other and with the writer, writers in turn through `lease`), mail goes to `outbox/` in
//! the host's format, letters to
//! `FAKTURA_POSTAL` when set. The PDF renderer is the host's (`faktura_providers::render`).
//! No rate limit applies. Only `bindings` names WIT.

pub mod lease;
pub mod services;
pub mod store;
pub mod txn;

use std::path::PathBuf;
use std::sync::OnceLock;

/// The plug's settings, read once per instance from `wasi:cli/environment`.
#[derive(Debug)]
pub struct Config {
    pub data: PathBuf,
    pub postal: Option<PathBuf>,
    /// Where the store keeps its files in `data`.
    pub store: store::Place,
}

impl Config {
    fn from_env() -> Config {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        let data = var("FAKTURA_DATA").map_or_else(|| PathBuf::from("/data"), PathBuf::from);
        Config {
            store: store::Place::in_dir(&data),
            postal: var("FAKTURA_POSTAL").map(PathBuf::from),
            data,
        }
    }

    pub fn get() -> &'static Config {
        static CONFIG: OnceLock<Config> = OnceLock::new();
        CONFIG.get_or_init(Config::from_env)
    }
}

#[cfg(all(target_arch = "wasm32", feature = "component"))]
mod bindings;
