//! A blocking client for the team ledger whose every wait for the server ends by a deadline.
//!
//! The `postgres` crate's blocking client waits for an answer as long as it takes. A server
//! whose processes are stopped (`SIGSTOP`, a hung machine whose kernel still runs) never
//! answers, yet the link is healthy: the kernel acknowledges what is sent, so neither the
//! keepalives nor `tcp_user_timeout` fire, and the server's own `statement_timeout` cannot run.
//! A verb, or a pre-push hook inside a push, would then hang forever. This client runs
//! tokio-postgres on a runtime of its own, as that crate does, and bounds each wait (one
//! statement, a `BEGIN`, a `COMMIT`) by [`ServerUrl::read_timeout`](super::ServerUrl): when it
//! passes, the connection is dropped (its protocol state is unknown) and the wait fails with
//! [`ClientError::NoAnswer`], an error of our own: the client library keeps its timeout error's
//! kind private, and one made through its hidden API could only be told apart by its text.
//!
//! Nothing else changes from the `postgres` crate: the same statements, rows and types, and its
//! errors as [`ClientError::Pg`].

use std::future::Future;
use std::time::Duration;

use postgres::error::SqlState;
use postgres::types::{ToSql, Type};
use postgres::{Error, IsolationLevel, Row};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

/// How a wait for the server fails.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The client library's error: the server refused a statement, or the connection broke.
    #[error(transparent)]
    Pg(#[from] Error),
    /// The server did not answer within the deadline; the connection was dropped.
    #[error(transparent)]
    NoAnswer(#[from] NoAnswer),
}

impl ClientError {
    /// The server's SQLSTATE, when the server refused a statement.
    pub fn code(&self) -> Option<&SqlState> {
        match self {
            ClientError::Pg(e) => e.code(),
            ClientError::NoAnswer(_) => None,
        }
    }
}

/// A wait that passed its deadline (the URL's `read_timeout`): the server did not answer, so
/// whether a `COMMIT` it was sent happened is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no answer within {} s (read_timeout)", .after.as_secs())]
pub struct NoAnswer {
    pub after: Duration,
}

/// An open connection to the server.
pub struct Client {
    /// Declared first, so it is dropped before the waiter's goodbye (see `Drop for Waiter`).
    client: tokio_postgres::Client,
    waiter: Waiter,
}

/// What bounds a wait: the runtime that drives the connection, and the deadline.
struct Waiter {
    runtime: Runtime,
    /// The task that reads and writes the socket; `None` once it was dropped at a deadline.
    connection: Option<JoinHandle<()>>,
    deadline: Option<Duration>,
}

impl Waiter {
    /// Runs `f` until it is done or the deadline passes; at the deadline the connection is
    /// dropped (its socket closed), so the client reports it closed from then on.
    fn wait<T>(&mut self, f: impl Future<Output = Result<T, Error>>) -> Result<T, ClientError> {
        let Some(limit) = self.deadline else {
            return Ok(self.runtime.block_on(f)?);
        };
        // The timer is made inside the runtime: it needs the runtime's clock.
        match self
            .runtime
            .block_on(async { tokio::time::timeout(limit, f).await })
        {
            Ok(out) => Ok(out?),
            Err(_) => {
                if let Some(task) = self.connection.take() {
                    task.abort();
                    // Let the runtime drop the aborted task now: it owns the socket.
                    let _ = self.runtime.block_on(task);
                }
                Err(NoAnswer { after: limit }.into())
            }
        }
    }
}

impl Client {
    /// Wraps a connection made on `runtime`: its connection task is spawned there, and every
    /// later wait drives it.
    pub(super) fn new<S, T>(
        runtime: Runtime,
        client: tokio_postgres::Client,
        connection: tokio_postgres::Connection<S, T>,
        deadline: Option<Duration>,
    ) -> Client
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let task = runtime.spawn(async move {
            // An error here reaches the client as a closed connection at its next wait.
            let _ = connection.await;
        });
        Client {
            client,
            waiter: Waiter {
                runtime,
                connection: Some(task),
                deadline,
            },
        }
    }

    /// Whether the connection is known to be closed (it broke, or a wait passed its deadline).
    pub(crate) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Begins a transaction at `isolation`, read-only or not.
    pub(crate) fn transaction_with(
        &mut self,
        isolation: IsolationLevel,
        read_only: bool,
    ) -> Result<Transaction<'_>, ClientError> {
        let mut builder = self.client.build_transaction().isolation_level(isolation);
        // Only when asked: otherwise `READ WRITE` would be spelled out, the default anyway.
        if read_only {
            builder = builder.read_only(true);
        }
        let start = builder.start();
        let tx = self.waiter.wait(start)?;
        Ok(Transaction {
            tx,
            waiter: &mut self.waiter,
        })
    }

    /// Begins a transaction at the server's default isolation.
    pub fn transaction(&mut self) -> Result<Transaction<'_>, ClientError> {
        let tx = self.waiter.wait(self.client.transaction())?;
        Ok(Transaction {
            tx,
            waiter: &mut self.waiter,
        })
    }

    /// One statement with its parameters' types: one round trip, nothing prepared.
    pub fn query_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<Row>, ClientError> {
        self.waiter.wait(self.client.query_typed(sql, params))
    }

    /// Statements without parameters, in the simple protocol.
    pub fn batch_execute(&mut self, sql: &str) -> Result<(), ClientError> {
        self.waiter.wait(self.client.batch_execute(sql))
    }
}

/// A transaction on a [`Client`]; dropped without [`Transaction::commit`], it is rolled back.
pub struct Transaction<'a> {
    tx: tokio_postgres::Transaction<'a>,
    waiter: &'a mut Waiter,
}

impl Transaction<'_> {
    /// One statement with its parameters' types: one round trip, nothing prepared.
    pub fn query_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<Row>, ClientError> {
        self.waiter.wait(self.tx.query_typed(sql, params))
    }

    /// Like [`Transaction::query_typed`], for the number of rows changed.
    pub(crate) fn execute_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<u64, ClientError> {
        self.waiter.wait(self.tx.execute_typed(sql, params))
    }

    /// Statements without parameters, in the simple protocol.
    pub fn batch_execute(&mut self, sql: &str) -> Result<(), ClientError> {
        self.waiter.wait(self.tx.batch_execute(sql))
    }

    pub fn commit(self) -> Result<(), ClientError> {
        self.waiter.wait(self.tx.commit())
    }
}

impl Drop for Waiter {
    /// Runs after the client is dropped (it is declared first in [`Client`]): tokio-postgres
    /// then sends `Terminate` and closes the socket, which takes no answer from the server, so a
    /// short bound only guards against the unexpected.
    fn drop(&mut self) {
        if let Some(task) = self.connection.take() {
            let _ = self
                .runtime
                .block_on(async { tokio::time::timeout(Duration::from_secs(1), task).await });
        }
    }
}
