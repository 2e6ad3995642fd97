//! A Burn remote server hosting one flex device, over a WebSocket on the loopback address only.
//! It prints `ws://127.0.0.1:<port>` (the port given as its argument, or one the OS picks) and
//! serves until its stdin is closed (the test closes it; in a terminal, Ctrl+D or Ctrl+C), or
//! for at most 30 minutes, so a forgotten server does not outlive its use.

use burn::server::{RemoteServer, WebSocketTransport};
use burn::tensor::Device;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::ExitCode;
use std::time::Duration;

const LIFETIME: Duration = Duration::from_secs(30 * 60);

fn main() -> ExitCode {
    let port: u16 = match std::env::args().nth(1).map(|p| p.parse()) {
        None => 0,
        Some(Ok(port)) => port,
        Some(Err(e)) => {
            eprintln!("usage: remote-server [port]: {e}");
            return ExitCode::from(2);
        }
    };
    // Bound here, on the loopback address, rather than by the transport (every interface).
    let listener = match TcpListener::bind(("127.0.0.1", port)) {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("remote-server: cannot listen on 127.0.0.1:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let address = match listener.local_addr() {
        Ok(address) => address,
        Err(e) => {
            eprintln!("remote-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "ws://{address}").and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    std::thread::spawn(move || {
        let served = RemoteServer::new([Device::flex()]).serve(WebSocketTransport::from_listener(listener));
        // It returns on Ctrl+C or SIGTERM (handlers it installs) or when it cannot serve.
        match served {
            Ok(()) => std::process::exit(0),
            Err(e) => {
                eprintln!("remote-server: {e}");
                std::process::exit(1);
            }
        }
    });
    std::thread::spawn(|| {
        std::thread::sleep(LIFETIME);
        eprintln!("remote-server: stopping after {} minutes", LIFETIME.as_secs() / 60);
        std::process::exit(3);
    });
    // Until the parent closes stdin: the test's stop.
    let mut sink = [0u8; 64];
    while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
    ExitCode::SUCCESS
}
