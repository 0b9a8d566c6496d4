use std::process::ExitCode;

use clap::Parser;

/// jemalloc: no per-allocation header (a cached product costs less), and with a background
/// thread it gives pages freed for a second back to the operating system, so a passivated
/// merchant's memory is returned (glibc's malloc keeps it). Measured in docs/performance.md.
/// Release builds take it with `--features jemalloc` (Cargo.toml says why it is a feature).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc reads its options from this symbol when it starts.
#[cfg(feature = "jemalloc")]
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8; 60] =
    b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

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
