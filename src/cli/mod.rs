//! The command line (DESIGN §2).

mod archive;
mod catalogue;
mod login;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::{ConfigError, Settings};
use crate::db::Db;
use crate::metrics::Metrics;
use crate::startup::{Application, Signals};
use crate::{telemetry, tenants};

#[derive(Debug, Parser)]
#[command(
    name = "merchantd",
    version,
    about = "Multi-tenant merchant commerce API server"
)]
pub struct Cli {
    /// Configuration file (default: merchantd.toml in the working directory, if present).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Migrate, apply every manifest in the tenants folder, and serve the API.
    Serve {
        /// Address to listen on (default 127.0.0.1:8080).
        #[arg(long)]
        bind: Option<String>,
        #[command(flatten)]
        db: DbArgs,
        /// Folder of tenant manifests (default tenants/).
        #[arg(long)]
        tenants: Option<PathBuf>,
    },
    /// Apply database migrations and exit.
    Migrate {
        #[command(flatten)]
        db: DbArgs,
    },
    /// Manage tenant manifests.
    Tenant {
        #[command(subcommand)]
        command: TenantCommand,
    },
    /// Manage employees' sign-in.
    Employee {
        #[command(subcommand)]
        command: EmployeeCommand,
    },
    /// Issue tokens without the browser flow (operators, scripts, smoke tests).
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// The hosting operator's realm (docs/operator.md).
    Operator {
        #[command(subcommand)]
        command: OperatorCommand,
    },
    /// Import or export a merchant's catalogue as CSV (docs/catalogue.md).
    Catalogue {
        #[command(subcommand)]
        command: CatalogueCommand,
    },
    /// Sign in through a browser and print a token (the OAuth loopback flow of RFC 8252).
    Login {
        /// Where the server is.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        server: String,
        /// The application to sign in to (the demo tenant's registers a loopback redirect).
        #[arg(long, default_value = "demo-pos")]
        client_id: String,
        /// Its client secret, for a confidential client (better from the environment).
        #[arg(long, env = "MERCHANTD_LOGIN_CLIENT_SECRET", hide_env_values = true)]
        client_secret: Option<String>,
        /// The scope to ask for.
        #[arg(long, default_value = "read write")]
        scope: String,
        /// Only print the address to open; do not try to start a browser.
        #[arg(long)]
        no_browser: bool,
        /// How long to wait for the browser, in seconds.
        #[arg(long, default_value_t = 300)]
        wait_secs: u64,
    },
    /// Print the API's OpenAPI 3.1 document (what `/openapi.json` serves), or write it to a file.
    Openapi {
        /// Write here instead of standard output (the repository keeps it at docs/openapi.json).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also write the field tables of the pages in this folder (`<!-- fields: Record -->`
        /// marks; the repository's are in docs/) from the declarations.
        #[arg(long)]
        docs: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum EmployeeCommand {
    /// Sets an employee's password, read from standard input (never from the command line,
    /// which other users of the machine can see).
    SetPassword {
        /// The employee's email.
        #[arg(long)]
        email: String,
        /// The merchant's manifest key, needed when the email belongs to several merchants.
        #[arg(long)]
        merchant: Option<String>,
        #[command(flatten)]
        db: DbArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Issues an access and refresh token pair exactly as the consent flow would (the role
    /// caps the scope; a family of its own) and prints the token response as JSON. The tokens
    /// are printed once and never logged.
    Issue {
        /// The merchant's manifest key.
        #[arg(long)]
        merchant: String,
        /// The application's client id (one of the merchant's).
        #[arg(long)]
        client: String,
        /// The employee the tokens act for.
        #[arg(long)]
        email: String,
        /// Scopes asked for; the employee's role may grant less.
        #[arg(long, default_value = "read write admin")]
        scope: String,
        #[command(flatten)]
        db: DbArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum OperatorCommand {
    /// Makes a token of the operator API (`/operator/...`), which works nowhere else, and prints
    /// it once as JSON; the database keeps only its SHA-256.
    Token {
        /// Who holds it (kept beside the token, never the token itself).
        #[arg(long)]
        name: String,
        /// Days until it stops working.
        #[arg(long, default_value_t = crate::domain::fleet::operator::DEFAULT_TOKEN_DAYS,
              value_parser = clap::value_parser!(u32).range(1..=3650))]
        days: u32,
        #[command(flatten)]
        db: DbArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum CatalogueCommand {
    /// Imports products, price instances, categories and opening stock from a CSV file, through
    /// the rules of the API. A file with a refused row writes nothing (each refused row is
    /// listed on standard error) unless --skip-invalid. Prints what was imported as JSON.
    Import {
        /// The CSV file (header: product,barcode,category,instance,price,tax_rate,stock:<store>...).
        file: PathBuf,
        /// The merchant's manifest key.
        #[arg(long)]
        merchant: String,
        /// Import the valid products and list the others, instead of importing nothing.
        #[arg(long)]
        skip_invalid: bool,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Writes the merchant's live catalogue as the CSV file `import` reads.
    Export {
        /// The merchant's manifest key.
        #[arg(long)]
        merchant: String,
        /// Write here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        db: DbArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum TenantCommand {
    /// Create or update merchants from manifests (idempotent); prints the ids as JSON.
    Apply {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Writes a merchant's archive: every row it has, as newline-delimited JSON
    /// (docs/operator.md, "Export and import").
    Export {
        /// The merchant's manifest key.
        key: String,
        /// Write here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Loads an archive into the database, whole or not at all (into an empty database: every
    /// id is kept). Prints the merchant imported as JSON.
    Import {
        file: PathBuf,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Moves merchants, every row and sign-in with its ids, from the database (stopped: no
    /// server may write to it) into another one, verifies each copy table by table, and only
    /// then removes it from the source (docs/operations.md, "From SQLite to PostgreSQL").
    /// Prints each merchant moved as a JSON line.
    Move {
        /// The merchants' manifest keys; none moves every merchant.
        keys: Vec<String>,
        /// The target database's URL (postgres://... or sqlite://...), or the name of a pod
        /// of the configured fleet (`pods`), which moves the merchants while servers run.
        #[arg(long)]
        to: String,
        #[command(flatten)]
        db: DbArgs,
    },
}

#[derive(Debug, Args)]
pub struct DbArgs {
    /// Database URL: sqlite://PATH or postgres://... (default sqlite://data/merchantd.db).
    #[arg(long)]
    pub database_url: Option<String>,
}

impl Cli {
    /// Settings from the file and the environment, with this command's flags on top.
    pub fn settings(&self) -> Result<Settings, ConfigError> {
        let mut settings = Settings::load(self.config.as_deref(), |k| std::env::var(k).ok())?;
        let db = match &self.command {
            Command::Serve {
                bind, db, tenants, ..
            } => {
                if let Some(bind) = bind {
                    settings.bind = bind.clone();
                }
                if let Some(dir) = tenants {
                    settings.tenants = dir.clone();
                }
                db
            }
            Command::Migrate { db } => db,
            Command::Employee {
                command: EmployeeCommand::SetPassword { db, .. },
            } => db,
            Command::Tenant {
                command:
                    TenantCommand::Apply { db, .. }
                    | TenantCommand::Export { db, .. }
                    | TenantCommand::Import { db, .. }
                    | TenantCommand::Move { db, .. },
            } => db,
            Command::Token {
                command: TokenCommand::Issue { db, .. },
            } => db,
            Command::Operator {
                command: OperatorCommand::Token { db, .. },
            } => db,
            Command::Catalogue {
                command: CatalogueCommand::Import { db, .. } | CatalogueCommand::Export { db, .. },
            } => db,
            Command::Openapi { .. } | Command::Login { .. } => return Ok(settings),
        };
        if let Some(url) = &db.database_url {
            settings.database_url = url.clone();
        }
        Ok(settings)
    }

    /// Runs the command; the result is the process's exit status.
    pub async fn run(self) -> anyhow::Result<()> {
        if matches!(
            self.command,
            Command::Login { .. } | Command::Openapi { .. }
        ) {
            return without_settings(self.command).await;
        }
        let settings = self.settings()?;
        telemetry::init(&settings);
        match self.command {
            Command::Serve { .. } => {
                let app = Application::build(settings, Signals::Handle).await?;
                tracing::info!(port = app.port(), "merchantd listening");
                app.run_until_stopped().await
            }
            Command::Migrate { .. } => {
                // Every pod of the fleet, home first (each one's id range checked).
                let pods = archive::open_pods(&settings).await?;
                let backend = pods.home().backend().name();
                let names: Vec<String> = pods.all().iter().map(|p| p.name.clone()).collect();
                for pod in pods.all() {
                    pod.db.close().await;
                }
                println!(
                    "{}",
                    serde_json::json!({"migrated": true, "backend": backend, "pods": names})
                );
                Ok(())
            }
            Command::Employee {
                command:
                    EmployeeCommand::SetPassword {
                        email, merchant, ..
                    },
            } => {
                let mut password = String::new();
                std::io::stdin().read_line(&mut password)?;
                let password = password.trim_end_matches(['\r', '\n']).to_owned();
                if password.chars().count() < 8 {
                    anyhow::bail!("the password must be at least 8 characters");
                }
                let iterations = settings.pbkdf2_iterations;
                let hash = tokio::task::spawn_blocking(move || {
                    crate::crypto::hash_password(&password, iterations)
                })
                .await?;
                let database = Db::connect(&settings.database_url, Metrics::new()).await?;
                database.migrate().await?;
                let result = database
                    .set_password(&email.trim().to_lowercase(), merchant.as_deref(), &hash)
                    .await;
                database.close().await;
                let id = result?;
                println!(
                    "{}",
                    serde_json::json!({"employeeId": id, "passwordSet": true})
                );
                Ok(())
            }
            Command::Token {
                command:
                    TokenCommand::Issue {
                        merchant,
                        client,
                        email,
                        scope,
                        ..
                    },
            } => {
                let database = Db::connect(&settings.database_url, Metrics::new()).await?;
                database.migrate().await?;
                let grant = Grant {
                    merchant: &merchant,
                    client: &client,
                    email: &email,
                    scope: &scope,
                };
                let issued = issue_tokens(&database, &settings, grant).await;
                database.close().await;
                println!("{}", serde_json::to_string_pretty(&issued?)?);
                Ok(())
            }
            Command::Tenant { command } => run_tenant(&settings, command).await,
            Command::Operator { command } => run_operator(&settings, command).await,
            Command::Catalogue { command } => run_catalogue(&settings, command).await,
            Command::Openapi { .. } | Command::Login { .. } => Ok(()),
        }
    }
}

async fn run_tenant(settings: &Settings, command: TenantCommand) -> anyhow::Result<()> {
    let files = match command {
        TenantCommand::Apply { files, .. } => files,
        TenantCommand::Export { key, out, .. } => {
            return archive::export(settings, &key, out.as_deref()).await
        }
        TenantCommand::Import { file, .. } => return archive::import(settings, &file).await,
        TenantCommand::Move { keys, to, .. } => {
            return archive::move_merchants(settings, &keys, &to).await
        }
    };
    // Validate every file before touching the database.
    let manifests = tenants::load_all(&files)?;
    let pods = archive::open_pods(settings).await?;
    let applied = tenants::apply_placed(&pods, manifests, settings.pbkdf2_iterations, true).await;
    for pod in pods.all() {
        pod.db.close().await;
    }
    let applied = applied?;
    println!("{}", serde_json::to_string_pretty(&applied)?);
    Ok(())
}

async fn run_operator(settings: &Settings, command: OperatorCommand) -> anyhow::Result<()> {
    let OperatorCommand::Token { name, days, .. } = command;
    let database = Db::connect(&settings.database_url, Metrics::new()).await?;
    database.migrate().await?;
    let issued = crate::engine::fleet::operator::Operator::new(std::sync::Arc::new(
        crate::db::fleet::Fleet::on(database.clone()),
    ))
    .issue_token(&name, days)
    .await;
    database.close().await;
    let token = issued.map_err(|e| anyhow::anyhow!("{e}"))?;
    let printed = serde_json::json!({"token": token, "name": name, "days": days});
    println!("{}", serde_json::to_string_pretty(&printed)?);
    Ok(())
}

async fn run_catalogue(settings: &Settings, command: CatalogueCommand) -> anyhow::Result<()> {
    match command {
        CatalogueCommand::Import {
            file,
            merchant,
            skip_invalid,
            ..
        } => {
            let job = catalogue::Import {
                file: &file,
                merchant: &merchant,
                skip_invalid,
            };
            let report = catalogue::import(settings, job).await?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        CatalogueCommand::Export { merchant, out, .. } => {
            catalogue::export(settings, &merchant, out.as_deref()).await
        }
    }
}

/// The commands that need no settings and no database: `openapi` (the document depends on the
/// code only) and `login` (a client of a server, not one; nothing logged).
async fn without_settings(command: Command) -> anyhow::Result<()> {
    if let Command::Openapi { out, docs } = &command {
        let text = crate::openapi::pretty();
        match out {
            Some(path) => std::fs::write(path, text)?,
            None => print!("{text}"),
        }
        if let Some(folder) = docs {
            for entry in std::fs::read_dir(folder)? {
                let path = entry?.path();
                if path.extension().is_some_and(|e| e == "md") {
                    let page = std::fs::read_to_string(&path)?;
                    let written = crate::openapi::tables::refresh(&page)
                        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                    if written != page {
                        std::fs::write(&path, written)?;
                    }
                }
            }
        }
        return Ok(());
    }
    let Command::Login {
        server,
        client_id,
        client_secret,
        scope,
        no_browser,
        wait_secs,
    } = command
    else {
        return Ok(());
    };
    let answer = login::run(login::Login {
        server,
        client_id,
        client_secret,
        scope,
        open_browser: !no_browser,
        wait: std::time::Duration::from_secs(wait_secs),
    })
    .await?;
    println!("{}", serde_json::to_string_pretty(&answer)?);
    Ok(())
}

/// What `merchantd token issue` was asked for.
struct Grant<'a> {
    merchant: &'a str,
    client: &'a str,
    email: &'a str,
    scope: &'a str,
}

/// Stores a new family with its first pair, the scope capped by the employee's role as the
/// consent page caps it, and gives the token response.
async fn issue_tokens(
    db: &Db,
    settings: &Settings,
    grant: Grant<'_>,
) -> anyhow::Result<serde_json::Value> {
    use crate::crypto::{random_token, sha256_hex};
    use crate::domain::oauth::token::{NewFamily, NewPair};
    use crate::domain::{now_millis, Role, ScopeSet};

    let asked = ScopeSet::parse(grant.scope)
        .map_err(|e| anyhow::anyhow!("--scope: {e}"))?
        .ok_or_else(|| anyhow::anyhow!("--scope: name at least one of read, write, admin"))?;
    let subject = db
        .grant_subject(
            grant.merchant,
            grant.client,
            &grant.email.trim().to_lowercase(),
        )
        .await?;
    let role = Role::from_id(subject.role_id)
        .ok_or_else(|| anyhow::anyhow!("the employee has an unknown role {}", subject.role_id))?;
    let scope = asked.capped(role.highest_scope()).to_scope_string();
    let (access, refresh) = (random_token("mcd_at_"), random_token("mcd_rt_"));
    let now = now_millis();
    let ttl = settings.access_token_ttl_secs;
    let family = NewFamily {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id: subject.merchant_id,
        employee_id: subject.employee_id,
        application_id: subject.application_id,
        scope: scope.clone(),
    };
    let pair = NewPair {
        access_hash: sha256_hex(&access),
        access_expires_at: now.saturating_add(i64::try_from(ttl)?.saturating_mul(1000)),
        access_scope: scope.clone(),
        refresh_hash: sha256_hex(&refresh),
        refresh_expires_at: now
            .saturating_add(i64::try_from(settings.refresh_token_ttl_secs)?.saturating_mul(1000)),
    };
    db.issue_family_pair(&family, &pair).await?;
    tracing::info!(
        target: "merchantd::audit",
        event = "token_issued",
        merchant_id = subject.merchant_id,
        application_id = subject.application_id,
        employee_id = subject.employee_id,
        scope = %scope,
        outcome = "issued by CLI",
        "token pair issued by the command line"
    );
    Ok(serde_json::json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": ttl,
        "refresh_token": refresh,
        "scope": scope,
    }))
}
