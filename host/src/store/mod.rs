//! The `store` interface of the WIT world, for the guest: its resources and its errors.
//!
//! It owns only the mapping between the generated bindings and the engine-neutral port in
//! `backend.rs`: it turns `DbError` into the guest's `error` (in one place, `From`) and
//! notes the last commit each request's reads could see. The size limits are each
//! engine's (`kv::fits`), so that an import keeps them too. It must not name a storage
//! engine: the engine is whatever `Backend` the host opened (`StoreCtx::db`): redb
//! (`redb.rs`) or PostgreSQL (`postgres.rs`).

pub(crate) mod backend;
pub(crate) mod conformance;
pub(crate) mod postgres;
pub(crate) mod redb;
pub(crate) mod transfer;

use std::sync::atomic::{AtomicU64, Ordering};

use wasmtime::component::{HasData, Linker, Resource, ResourceTable};

pub(crate) use self::backend::{Backend, DbError};
use crate::bindings::faktura::service::store::{self as wit, Entries, Error};

/// The store every request shares: the interface's context.
pub(crate) struct StoreCtx {
    /// The storage engine; the request path sees only the port.
    pub(crate) db: Box<dyn Backend>,
}

/// What a request's store calls are given: the shared context, the request's resource
/// table (its transactions) and the last commit its reads could see, which its answer
/// waits for (`Backend::durable`).
pub(crate) struct StoreView<'a> {
    pub(crate) ctx: &'a StoreCtx,
    pub(crate) table: &'a mut ResourceTable,
    pub(crate) seen: &'a AtomicU64,
}

/// Adds the `store` import to `linker`; `view` finds the view in a request's data.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    view: fn(&mut T) -> StoreView<'_>,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, HasStore>(linker, view)
}

/// What the generated `add_to_linker` hands the `Host` impls: the view alone.
struct HasStore;

impl HasData for HasStore {
    type Data<'a> = StoreView<'a>;
}

/// The guest's `read-txn`: a snapshot of whichever engine runs.
#[expect(
    unreachable_pub,
    reason = "`bindgen!` in bindings.rs maps the WIT resource onto it"
)]
pub struct ReadTxn(Box<dyn backend::ReadTxn>);

/// The guest's `write-txn`. Dropped with the resource table when the guest traps, which
/// rolls it back (`backend::WriteTxn`'s contract).
#[expect(
    unreachable_pub,
    reason = "`bindgen!` in bindings.rs maps the WIT resource onto it"
)]
pub struct WriteTxn(Box<dyn backend::WriteTxn>);

impl From<DbError> for Error {
    fn from(e: DbError) -> Error {
        match e {
            DbError::Conflict => Error::Conflict,
            DbError::TooLarge => Error::TooLarge,
            DbError::Backend(message) => Error::Backend(message),
            DbError::Unknown(message) => Error::UnknownOutcome(message),
            DbError::Unavailable(message) => Error::Unavailable(message),
            DbError::Full(message) => Error::Full(message),
        }
    }
}

/// A scan's entries as the interface answers them (`kv::pack`).
fn entries(list: Vec<backend::Entry>) -> Result<Entries, Error> {
    let (bytes, ends) = faktura_providers::kv::pack(&list).ok_or(Error::TooLarge)?;
    Ok(Entries { bytes, ends })
}

impl wit::Host for StoreView<'_> {
    async fn begin_read(&mut self) -> wasmtime::Result<Result<Resource<ReadTxn>, Error>> {
        // Taken before the snapshot: every commit the snapshot holds is numbered up to it.
        let visible = self.ctx.db.visible();
        self.seen.fetch_max(visible, Ordering::SeqCst);
        match self.ctx.db.begin_read().await {
            Ok(txn) => Ok(Ok(self.table.push(ReadTxn(txn))?)),
            Err(e) => Ok(Err(e.into())),
        }
    }

    async fn begin_write(
        &mut self,
        scope: Vec<u8>,
    ) -> wasmtime::Result<Result<Resource<WriteTxn>, Error>> {
        match self.ctx.db.begin_write_in(scope).await {
            Ok(txn) => Ok(Ok(self.table.push(WriteTxn(txn))?)),
            Err(e) => Ok(Err(e.into())),
        }
    }
}

/// The reads of a transaction resource (`$Res`), the same for read and write transactions.
macro_rules! reads {
    ($Res:ident) => {
        async fn get(
            &mut self,
            txn: Resource<$Res>,
            key: Vec<u8>,
        ) -> wasmtime::Result<Result<Option<Vec<u8>>, Error>> {
            let txn = &mut self.table.get_mut(&txn)?.0;
            Ok(txn.get(key).await.map_err(Error::from))
        }

        async fn get_many(
            &mut self,
            txn: Resource<$Res>,
            keys: Vec<Vec<u8>>,
        ) -> wasmtime::Result<Result<Vec<Option<Vec<u8>>>, Error>> {
            let txn = &mut self.table.get_mut(&txn)?.0;
            Ok(txn.get_many(keys).await.map_err(Error::from))
        }

        async fn scan(
            &mut self,
            txn: Resource<$Res>,
            prefix: Vec<u8>,
            after: Option<Vec<u8>>,
            limit: u32,
            reverse: bool,
        ) -> wasmtime::Result<Result<Entries, Error>> {
            let txn = &mut self.table.get_mut(&txn)?.0;
            let found = txn.scan(prefix, after, limit, reverse).await;
            Ok(found.map_err(Error::from).and_then(entries))
        }
    };
}

impl wit::HostReadTxn for StoreView<'_> {
    reads!(ReadTxn);

    async fn drop(&mut self, txn: Resource<ReadTxn>) -> wasmtime::Result<()> {
        self.table.delete(txn)?;
        Ok(())
    }
}

impl wit::HostWriteTxn for StoreView<'_> {
    reads!(WriteTxn);

    async fn put(
        &mut self,
        txn: Resource<WriteTxn>,
        key: Vec<u8>,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), Error>> {
        // Every engine keeps the interface's limits (`kv::fits`), so that data written
        // through one backend, an import included, fits any other.
        let txn = &mut self.table.get_mut(&txn)?.0;
        Ok(txn.put(key, value).await.map_err(Error::from))
    }

    async fn delete(
        &mut self,
        txn: Resource<WriteTxn>,
        key: Vec<u8>,
    ) -> wasmtime::Result<Result<(), Error>> {
        let txn = &mut self.table.get_mut(&txn)?.0;
        Ok(txn.delete(key).await.map_err(Error::from))
    }

    async fn write_many(
        &mut self,
        txn: Resource<WriteTxn>,
        writes: Vec<wit::Write>,
    ) -> wasmtime::Result<Result<(), Error>> {
        let txn = &mut self.table.get_mut(&txn)?.0;
        let writes = writes.into_iter().map(|w| (w.key, w.value)).collect();
        Ok(txn.write_many(writes).await.map_err(Error::from))
    }

    async fn next_ids(
        &mut self,
        txn: Resource<WriteTxn>,
        counter: Vec<u8>,
        n: u32,
    ) -> wasmtime::Result<Result<Vec<u64>, Error>> {
        let txn = &mut self.table.get_mut(&txn)?.0;
        Ok(txn.next_ids(counter, n).await.map_err(Error::from))
    }

    async fn commit(&mut self, txn: Resource<WriteTxn>) -> wasmtime::Result<Result<(), Error>> {
        let txn = self.table.delete(txn)?.0;
        Ok(txn.commit().await.map_err(Error::from))
    }

    async fn drop(&mut self, txn: Resource<WriteTxn>) -> wasmtime::Result<()> {
        let txn = self.table.delete(txn)?.0;
        match txn.rollback().await {
            Ok(()) => {}
            // A write that collided is rolled back and run again: expected, not an error.
            Err(DbError::Conflict) => tracing::debug!("rolled back a write that collided"),
            Err(e) => tracing::error!("rolling back a write: {e}"),
        }
        Ok(())
    }
}
