//! Faktura's invoicing service as a WebAssembly component.
//!
//! This file is the only one that names `wit_bindgen`: it generates the bindings of the
//! `faktura:service/service` world and exports `wasi:http/incoming-handler` and `admin`.
//! Everything below works on plain Rust values and the traits of `caps`.

pub mod caps;
pub mod codec;
pub mod domain;
pub mod http;
#[cfg(test)]
mod layers;
pub mod limits;
pub mod store;
#[cfg(target_arch = "wasm32")]
mod wit;

#[cfg(target_arch = "wasm32")]
#[expect(
    unsafe_code,
    reason = "wit-bindgen's generated glue exports and calls raw ABI functions"
)]
mod bindings {
    #[cfg(not(feature = "fused"))]
    wit_bindgen::generate!({
        path: "../wit",
        world: "faktura:service/service",
        generate_all,
    });
    // The plug compiled in: only WASI imported (`wit::fused`).
    #[cfg(feature = "fused")]
    wit_bindgen::generate!({
        path: "../wit",
        world: "faktura:service/standalone",
        generate_all,
    });

    pub(crate) use self::exports::faktura::service::admin;
    pub(crate) use self::exports::wasi::http::incoming_handler;

    struct Component;

    impl incoming_handler::Guest for Component {
        fn handle(
            request: wasi::http::types::IncomingRequest,
            response_out: wasi::http::types::ResponseOutparam,
        ) {
            crate::wit::handle(request, response_out);
        }
    }

    impl admin::Guest for Component {
        fn bootstrap(api_key: Option<String>) -> Result<Option<admin::AccountKey>, String> {
            crate::wit::bootstrap(api_key)
        }

        fn create_account(name: String, admin_email: String) -> Result<admin::AccountKey, String> {
            crate::wit::create_account(&name, &admin_email)
        }

        fn create_user(account_id: u64, email: String) -> Result<admin::AccountKey, String> {
            crate::wit::create_user(account_id, &email)
        }

        fn revoke_user(user_id: u64) -> Result<(), String> {
            crate::wit::revoke_user(user_id)
        }

        fn migrate() -> Result<admin::Migration, String> {
            crate::wit::migrate()
        }

        fn upkeep() -> Result<admin::UpkeepReport, String> {
            crate::wit::upkeep()
        }

        fn deliver(accounts: Vec<u64>) -> Result<u32, String> {
            crate::wit::deliver(accounts)
        }

        fn check() -> Result<admin::CheckReport, String> {
            crate::wit::check()
        }
    }

    export!(Component);
}
