//! The integration tests, one binary (a module per area) so that wasmtime is linked once.
//! Each test starts the real host (in-process on 127.0.0.1:0, or as a process) with a
//! temporary data directory and drives it over HTTP; the harness is tests/src/lib.rs.
//! `FAKTURA_SLOW_TESTS=1` adds the wall-clock assertions a loaded machine cannot hold.

#[macro_use]
mod support;

mod api_reference;
mod backup;
mod both_kinds;
mod catalogue;
mod clients;
mod concurrency;
mod corpus;
mod crash;
mod credit_notes;
mod disk_faults;
mod docs;
mod documents;
mod dunning;
mod einvoice;
mod failover;
mod fields;
mod harness;
mod idempotency;
mod incoming_views;
mod incomings;
mod invoices;
mod json;
mod mail;
mod operations;
mod portal;
mod postgres;
mod postgres_cluster;
mod postgres_mail;
mod profiling;
mod property_values;
mod protocol;
mod recurring;
mod resources;
mod sales;
mod sandbox;
mod standalone;
mod store_conformance;
mod suppliers;
mod upgrade;
mod webhooks;
