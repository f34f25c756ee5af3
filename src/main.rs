//! The `pandemic-boids` binary: the command line and the window on a desktop (`cli`); in a
//! browser, the app started from the page's address (`view::web`). With `export=S` in the
//! address, the page first runs the same simulation headless to S simulated seconds and puts its
//! metrics into the page, so a test can compare them with `pandemic-boids run` (and says in the
//! console when that run starts and ends, which `web/bench.sh` times); with `t=S` the app opens
//! at S simulated seconds (replayed, paused).

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    pandemic_boids::cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {
    use pandemic_boids::run::Simulation;
    use pandemic_boids::view::{self, control::samples_csv, web};
    let (config, link) = web::link_from_page();
    if let Some(until) = link.export {
        let mut sim = Simulation::new(config.clone(), Some(1));
        web::log("export: run started");
        sim.run_until(until);
        web::log(&format!(
            "export: run finished, {} steps, vector path {}",
            sim.clock().step,
            pandemic_boids::sim::lanes::Path::current().describe()
        ));
        let rows: Vec<_> = sim
            .samples()
            .iter()
            .filter(|s| s.time_s < until - 1e-9)
            .cloned()
            .collect();
        web::put_metrics(&samples_csv(&rows));
    }
    let mut app = pandemic_boids::app(config, &link.scenario);
    // `t=`: open the run at that moment (replayed from the start, then paused).
    app.world_mut()
        .resource_mut::<view::timeline::Timeline>()
        .start_at = link.t;
    app.run();
}
