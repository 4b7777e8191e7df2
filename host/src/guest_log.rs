//! The guest's standard error, line by line, as events of the host's log in the span of
//! the request whose instance wrote it: the guest's error lines then carry the request id,
//! and a JSON log stays one object per line.
//!
//! It owns only that stream; the log's format is `main.rs`'s.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use hyper::body::Bytes;
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// A line this long without its end is logged as it is: the buffer stays bounded.
const LINE_BYTES_MAX: usize = 16 << 10;

/// The stderr of one instance. Every stream the guest opens on it writes into one buffer,
/// so that a line written in pieces (as `eprintln!` does) is one event.
pub(crate) struct GuestStderr(Arc<Mutex<Lines>>);

impl GuestStderr {
    /// Its lines are logged in `span`.
    pub(crate) fn new(span: tracing::Span) -> GuestStderr {
        GuestStderr(Arc::new(Mutex::new(Lines {
            span,
            partial: Vec::new(),
        })))
    }

    fn stream(&self) -> Stream {
        Stream(self.0.clone())
    }
}

impl IsTerminal for GuestStderr {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestStderr {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.stream())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.stream())
    }
}

/// The text written so far that does not end a line yet; logged when the last stream and
/// the instance's context are gone, so that a guest's last words before a trap are kept.
struct Lines {
    span: tracing::Span,
    partial: Vec<u8>,
}

impl Lines {
    fn write(&mut self, bytes: &[u8]) {
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            self.log(&line);
        }
        if self.partial.len() > LINE_BYTES_MAX {
            let line = std::mem::take(&mut self.partial);
            self.log(&line);
        }
    }

    fn log(&self, line: &[u8]) {
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end();
        if !line.is_empty() {
            self.span
                .in_scope(|| tracing::warn!(target: "faktura::guest", "{line}"));
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let rest = std::mem::take(&mut self.partial);
        self.log(&rest);
    }
}

/// One stream the guest opened on its stderr. Writes never wait: a line is logged at once.
struct Stream(Arc<Mutex<Lines>>);

impl Stream {
    fn write(&self, bytes: &[u8]) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write(bytes);
    }
}

impl OutputStream for Stream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        Stream::write(self, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(LINE_BYTES_MAX)
    }
}

impl Pollable for Stream {
    // The signature `#[async_trait]` gives the trait's `async fn ready(&mut self)`: the
    // stream is always ready.
    fn ready<'a, 'b>(&'a mut self) -> Pin<Box<dyn Future<Output = ()> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(std::future::ready(()))
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.write(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_written_in_pieces_over_two_streams_is_one_and_the_rest_is_kept() {
        let stderr = GuestStderr::new(tracing::Span::none());
        stderr.stream().write(b"faktura: internal ");
        stderr.stream().write(b"error\nsecond");
        let lines = stderr.0.lock().unwrap();
        assert_eq!(lines.partial, b"second");
    }
}
