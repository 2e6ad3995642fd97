//! The client side: the digits classifier imported with #[onnx_model], run on a device of a Burn
//! remote server. With a server's address (`ws://host:port`, as `remote-server` prints it) it
//! uses that server; without one it starts `remote-server` on the loopback address itself and
//! stops it at the end. It prints the accuracy and the time per forward, remote and local.
#![forbid(unsafe_code)]

use burn::tensor::Device;
use digits::{predict, test_images, test_labels, Digits};
use remote_example::{connect, median_ms, LoopbackServer};
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("remote-example: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let started;
    let url = match std::env::args().nth(1) {
        Some(url) => {
            started = None;
            url
        }
        None => {
            // The server binary is built beside this one (`cargo run -p remote-example` builds both).
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            let server = LoopbackServer::start(&exe.with_file_name("remote-server"))?;
            let url = server.url().to_string();
            started = Some(server);
            url
        }
    };
    let remote = connect(&url)?;
    // The weights cross the wire here, once.
    let model = Digits::from_embedded(&remote);
    let predictions = predict(model.forward(test_images(&remote)));
    let labels = test_labels();
    let correct = predictions.iter().zip(&labels).filter(|(p, l)| p == l).count();
    println!("digits on {url}: {correct}/{} test images classified correctly", labels.len());

    let local = Device::flex();
    let local_model = Digits::from_embedded(&local);
    let remote_ms = median_ms(5, || predict(model.forward(test_images(&remote))));
    let local_ms = median_ms(5, || predict(local_model.forward(test_images(&local))));
    println!("per forward of {} images: remote {remote_ms:.2} ms, local flex {local_ms:.2} ms", labels.len());
    started.map_or(Ok(()), LoopbackServer::stop)
}
