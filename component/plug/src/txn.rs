//! The store's transactions as the plug's callers hold them: a read transaction, and the
//! write transaction that holds the store's turn from its begin to its end (dropped
//! without `commit`, it rolls back and ends the turn). The plug's WIT exports (`bindings`)
//! and the service compiled with the plug (its feature `fused`) both call these.

use std::cell::{Cell, RefCell};

use faktura_providers::kv;

use crate::Config;
use crate::store::{self, StoreError};

/// Why a commit failed: as any store call, or the disk had no room for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitError {
    Store(StoreError),
    /// The disk is full: the commit could not be made durable.
    Full(String),
}

/// A read transaction: a snapshot that holds nothing, so dropping it ends it.
pub struct ReadTxn(store::Snapshot);

impl ReadTxn {
    /// Begins one on the last durable commit, without waiting for anyone.
    pub fn begin() -> Result<ReadTxn, StoreError> {
        store::begin_read(&Config::get().store).map(ReadTxn)
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        store::get(&store::read_table(self.0.txn()?)?, key)
    }

    pub fn get_many(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        store::get_many(&store::read_table(self.0.txn()?)?, keys)
    }

    pub fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<kv::Entry>, StoreError> {
        store::scan(
            &store::read_table(self.0.txn()?)?,
            prefix,
            after,
            limit,
            reverse,
        )
    }
}

/// The write transaction, holding the store's turn.
pub struct WriteTxn {
    txn: RefCell<Option<redb::WriteTransaction>>,
    committed: Cell<bool>,
}

impl Drop for WriteTxn {
    fn drop(&mut self) {
        drop(self.txn.take());
        store::end_write(self.committed.get());
    }
}

fn ended() -> StoreError {
    StoreError::Backend("the transaction has ended".into())
}

impl WriteTxn {
    /// Waits for the store's turn and begins the transaction.
    pub fn begin() -> Result<WriteTxn, StoreError> {
        let txn = store::begin_write(&Config::get().store)?;
        Ok(WriteTxn {
            txn: RefCell::new(Some(txn)),
            committed: Cell::new(false),
        })
    }

    /// Runs `f` on the transaction once the turn is confirmed.
    fn with<T>(
        &self,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        store::confirm_turn()?;
        let txn = self.txn.borrow();
        f(txn.as_ref().ok_or_else(ended)?)
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.with(|txn| store::get(&store::write_table(txn)?, key))
    }

    pub fn get_many(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.with(|txn| store::get_many(&store::write_table(txn)?, keys))
    }

    pub fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<kv::Entry>, StoreError> {
        self.with(|txn| store::scan(&store::write_table(txn)?, prefix, after, limit, reverse))
    }

    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.with(|txn| store::put(txn, key, value))
    }

    pub fn delete(&self, key: &[u8]) -> Result<(), StoreError> {
        self.with(|txn| store::delete(txn, key))
    }

    pub fn write_many(
        &self,
        writes: impl IntoIterator<Item = (Vec<u8>, Option<Vec<u8>>)>,
    ) -> Result<(), StoreError> {
        self.with(|txn| store::write_many(txn, writes))
    }

    pub fn next_ids(&self, counter: &[u8], n: u32) -> Result<Vec<u64>, StoreError> {
        self.with(|txn| store::next_ids(txn, counter, n))
    }

    /// Commits durably and ends the turn. A commit that failed because the turn was lost on
    /// the way kept nothing (`Conflict`); one the disk had no room for is `Full`.
    pub fn commit(self) -> Result<(), CommitError> {
        store::confirm_turn().map_err(CommitError::Store)?;
        let result = match self.txn.borrow_mut().take() {
            Some(t) => t.commit().map_err(|e| {
                store::confirm_turn().map_or_else(CommitError::Store, |()| commit_error(e))
            }),
            None => Err(CommitError::Store(ended())),
        };
        self.committed.set(result.is_ok());
        // Dropping `self` ends the turn.
        result
    }
}

fn commit_error(e: redb::CommitError) -> CommitError {
    match redb::Error::from(e) {
        redb::Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull => {
            CommitError::Full(io.to_string())
        }
        e => CommitError::Store(StoreError::Backend(e.to_string())),
    }
}
