use std::process::ExitCode;

use clap::Parser;

#[actix_web::main]
async fn main() -> ExitCode {
    let cli = merchantd::cli::Cli::parse();
    match cli.run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("merchantd: {err:#}");
            ExitCode::FAILURE
        }
    }
}
