//! The client side of Burn's remote backend for an imported model, and the loopback server the
//! test and the example start: `remote-server` (src/bin) serves one flex device over a WebSocket
//! on 127.0.0.1, and a client reaches it as an ordinary `Device`.
//!
//! Weights cross the wire once, when the model is loaded onto the remote device; each `forward`
//! then sends its input data and the operations (Burn's IR, batched), and a read sends the
//! output back.
#![forbid(unsafe_code)]

use burn::remote::RemoteHost;
use burn::tensor::Device;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// The device a Burn remote server at `url` (`ws://host:port`) hosts first.
pub fn connect(url: &str) -> Result<Device, String> {
    Device::remote_options(&RemoteHost::websocket(url))
        .init()
        .map_err(|e| format!("cannot connect to the remote server at {url}: {e}"))
}

/// A `remote-server` process on the loopback address, stopped by [`LoopbackServer::stop`] (or
/// killed when dropped without it).
pub struct LoopbackServer {
    child: Child,
    /// Held open: the server exits when it is closed.
    stdin: Option<ChildStdin>,
    url: String,
}

impl LoopbackServer {
    /// Starts the server binary and reads the address it listens on from its first line.
    pub fn start(binary: &Path) -> Result<Self, String> {
        let mut child = Command::new(binary)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stdin = child.stdin.take();
        let mut line = String::new();
        let read = match child.stdout.take() {
            Some(stdout) => BufReader::new(stdout).read_line(&mut line).map_err(|e| e.to_string()),
            None => Err("no stdout".to_string()),
        };
        let server = Self { child, stdin, url: line.trim().to_string() };
        match read {
            Ok(_) if server.url.starts_with("ws://127.0.0.1:") => Ok(server),
            Ok(_) => Err(format!("the server printed {:?}, not its loopback address", server.url)),
            Err(e) => Err(format!("cannot read the server's address: {e}")),
        }
    }

    /// `ws://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Closes the server's stdin and waits (at most 10 s) for it to exit; its exit status must
    /// be success.
    pub fn stop(mut self) -> Result<(), String> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.child.try_wait().map_err(|e| e.to_string())? {
                Some(status) if status.success() => return Ok(()),
                Some(status) => return Err(format!("the server exited with {status}")),
                None if Instant::now() > deadline => return Err("the server did not stop within 10 s".into()),
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        // Only reached without `stop` (a failed test): never leave the server behind.
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The median wall time of `rounds` calls of `run` (after one warm-up call), in milliseconds.
pub fn median_ms<T>(rounds: usize, mut run: impl FnMut() -> T) -> f64 {
    let _ = run();
    let mut times: Vec<f64> = (0..rounds.max(1))
        .map(|_| {
            let started = Instant::now();
            let _ = run();
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
