import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV, type TenantsDocument } from '@adhoc-scheduler/shared';
import type { CliOptions } from './options.js';
import { Progress } from './progress.js';
import { histogramSpec, renderSvg, svgToPng } from './report/charts.js';
import { renderHtml } from './report/html.js';
import { machineInfo, type RunResult, type ScenarioResult } from './report/results.js';
import { SCENARIOS } from './scenarios/catalog.js';
import type { RunContext } from './scenarios/context.js';
import type { ScenarioParams } from './scenarios/params.js';
import { LOAD_TEST_QUOTAS, type Scenario } from './scenarios/scenario.js';
import { startChildService } from './service/child.js';
import { registerTenants, type RegisteredTenants } from './registered-tenants.js';
import { harnessClients, type SchedulerService, type ServiceFiles } from './service/connection.js';
import { startCrashableService, type CrashableService } from './service/crashable.js';
import { connectToDeployedStack, connectToRunningService } from './service/external.js';
import { startInProcessService } from './service/in-process.js';
import { sourceVersion, type SourceVersion } from './source.js';

export const LOADTEST_DIR = fileURLToPath(new URL('..', import.meta.url));
/** The checkout the harness runs from. */
export const REPO_ROOT = join(LOADTEST_DIR, '..');

/** The local service's settings for a scenario: the windows it runs with, its log level, and what else the scenario needs. */
export function serviceEnv(scenario: Scenario, params: ScenarioParams): Record<string, string> {
  return {
    [ENV.nearPathWindowSeconds]: String(params.windowSeconds),
    [ENV.loaderIntervalSeconds]: String(params.loaderIntervalSeconds),
    [ENV.logLevel]: 'info',
    ...scenario.service.settings?.(params),
  };
}

/** The local service's tenants: the public one (the shared input topic) with quotas the run never reaches, and the scenario's own. */
export function serviceTenants(scenario: Scenario): TenantsDocument {
  const { tenants } = scenario.service;
  return { public: LOAD_TEST_QUOTAS, ...(tenants ? { tenants } : {}) };
}

/**
 * The files of a local service the harness starts, in the run's results: its registry, which it
 * re-reads as it changes (as scripts/start's service does), and its outputs, which the operator's
 * tenant commands read.
 */
const SERVICE_FILES = { tenants: 'tenants.json', outputs: 'outputs.json' } as const;

/** Where a service that is killed keeps its state when not told: in the run's results, removed at the end. */
const CRASHABLE_DATA_DIR = 'service-data';
/** Every fault injected into a service that is killed, one JSON line each, in the run's results. */
const FAULT_LOG = 'faults.jsonl';

async function startService(
  options: CliOptions,
  scenario: Scenario,
  outDir: string,
  runId: string,
): Promise<SchedulerService | CrashableService> {
  const choice = options.service;
  const logFile = join(outDir, 'service.log');
  switch (choice.kind) {
    case 'child':
    case 'in-process': {
      const files: ServiceFiles = { tenants: join(outDir, SERVICE_FILES.tenants), outputs: join(outDir, SERVICE_FILES.outputs) };
      await writeFile(files.tenants, `${JSON.stringify(serviceTenants(scenario), null, 2)}\n`);
      const local = {
        env: serviceEnv(scenario, options.params),
        emitterConcurrency: choice.emitterConcurrency,
        dataDir: choice.dataDir,
        tenants: { file: files.tenants },
        logFile,
      };
      // parseCli lets a scenario that kills the service run it in a child process only.
      const { crashes } = scenario.service;
      const service = crashes
        ? await startCrashableService({
            ...local,
            dataDir: choice.dataDir ?? join(outDir, CRASHABLE_DATA_DIR),
            removeDataDirOnStop: choice.dataDir === undefined,
            // Not the run id itself: the run's own topics (`<runId>-out`) would then be named as the scheduler's, which it never publishes to.
            namePrefix: `${runId}-service`,
            faults: { ...crashes(options.params, runId), logFile: join(outDir, FAULT_LOG) },
          })
        : choice.kind === 'child'
          ? await startChildService(local)
          : await startInProcessService(local);
      // As scripts/start writes them once the service is ready.
      await writeFile(files.outputs, `${JSON.stringify(service.local?.outputs, null, 2)}\n`);
      return Object.assign(service, { files });
    }
    case 'external':
      return connectToRunningService(resolve(REPO_ROOT, choice.outputsFile), resolve(REPO_ROOT, choice.tenantsFile));
    case 'aws':
      return connectToDeployedStack(choice);
  }
}

/** A moment as run ids and result folders name it: 20261127-201500. */
export function timeStamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

function newRunId(): string {
  return `lt-${timeStamp(new Date())}-${randomBytes(2).toString('hex')}`;
}

export interface RunOutput {
  readonly result: RunResult;
  readonly outDir: string;
}

/**
 * Runs one scenario end to end and writes its results; the service is stopped whatever happens.
 * `source` names the code measured when it is not this checkout's (an external service started
 * from another tree: loadtest compare's base).
 */
export async function runScenario(
  options: CliOptions,
  command: string,
  source: SourceVersion | undefined = sourceVersion(REPO_ROOT),
): Promise<RunOutput> {
  const runId = newRunId();
  const outDir = resolve(options.outDir ?? join(LOADTEST_DIR, 'results', `${options.scenario}-${runId}`));
  await mkdir(outDir, { recursive: true });
  const progress = new Progress(options.progress);
  const startedAt = new Date();
  const machine = machineInfo();
  const deadline = startedAt.getTime() + options.maxMinutes * 60_000;

  const scenario = SCENARIOS[options.scenario];
  progress.note(`${options.scenario}: run ${runId}, results in ${outDir}`);
  const service = await startService(options, scenario, outDir, runId);
  const clients = harnessClients(service.access);
  const crashable = 'killAndRestart' in service ? service : undefined;
  let measured: ScenarioResult;
  let registered: RegisteredTenants | undefined;
  let loadStartedAt: Date | undefined;
  try {
    if (options.registeredTenants !== undefined) {
      // parseCli takes --registered-tenants for a local service only, which has its files.
      if (service.files === undefined) throw new Error('--registered-tenants needs a local service');
      progress.note(`registering ${options.registeredTenants.toLocaleString('en-US')} tenants by tenant import`);
      registered = await registerTenants(
        service.files,
        { clients, emitterRoleArn: service.emitterRoleArn },
        options.registeredTenants,
        outDir,
        `loadtest-${runId}`,
      );
      progress.note(
        `registered in ${registered.importSeconds.toFixed(1)} s; the service took the last one's first event ${registered.inForceSeconds.toFixed(1)} s later`,
      );
    }
    const ctx: RunContext = { runId, user: `loadtest-${runId}`, service, clients, progress, measure: options.measure, deadline, crashable };
    loadStartedAt = new Date();
    measured = await scenario.run(ctx, options.params);
  } finally {
    progress.stop();
    clients.destroy();
    await service.stop();
  }

  const { distribution, distributionByTenant, ...rest } = measured;
  const files: Record<string, string> = { json: 'results.json', html: 'report.html' };
  if (service.mode === 'child' || service.mode === 'in-process') {
    files.serviceLog = 'service.log';
    files.tenants = SERVICE_FILES.tenants;
  }
  if (crashable) files.faults = FAULT_LOG;
  const svgs: { linear?: string; log?: string; byTenant: Record<string, string> } = { byTenant: {} };
  if (measured.delivery?.latenessMs && distribution.length > 0) {
    for (const scale of ['linear', 'log'] as const) {
      const svg = await renderSvg(histogramSpec({ title: measured.title, distribution, lateness: measured.delivery.latenessMs }, scale));
      svgs[scale] = svg;
      const file = `lateness-${scale}.png`;
      await writeFile(join(outDir, file), svgToPng(svg));
      files[scale === 'linear' ? 'pngLinear' : 'pngLog'] = file;
    }
  }
  // One plot per tenant: a spike would hide a small tenant in the combined one. Log counts only where there are many.
  for (const [tenant, tenantDistribution] of Object.entries(distributionByTenant ?? {})) {
    const lateness = measured.delivery?.byTenant?.[tenant]?.latenessMs;
    if (!lateness || tenantDistribution.length === 0) continue;
    const scale = lateness.count >= 100 ? 'log' : 'linear';
    const svg = await renderSvg(
      histogramSpec(
        { title: `tenant ${tenant}: ${lateness.count.toLocaleString('en-US')} events`, distribution: tenantDistribution, lateness },
        scale,
      ),
    );
    svgs.byTenant[tenant] = svg;
    const file = `lateness-${tenant}-${scale}.png`;
    await writeFile(join(outDir, file), svgToPng(svg));
    files[`png-${tenant}`] = file;
  }
  const config = service.local?.config;
  const result: RunResult = {
    scenario: options.scenario,
    runId,
    command,
    startedAt: startedAt.toISOString(),
    loadStartedAt: (loadStartedAt ?? startedAt).toISOString(),
    finishedAt: new Date().toISOString(),
    machine,
    source,
    service: {
      mode: service.mode,
      settings: {
        nearPathWindowSeconds: config?.nearPathWindowSeconds,
        loaderIntervalSeconds: config?.loaderIntervalSeconds,
        loaderLookaheadSeconds: config?.loaderLookaheadSeconds,
        emitterLeadMs: config?.emitterLeadMs,
        shardCount: config?.shardCount,
        emitterConcurrency:
          options.service.kind === 'child' || options.service.kind === 'in-process'
            ? (options.service.emitterConcurrency ?? 'runtime default')
            : undefined,
        stateOnDisk:
          options.service.kind === 'child' || options.service.kind === 'in-process'
            ? options.service.dataDir !== undefined || crashable !== undefined
            : undefined,
      },
    },
    ...(registered === undefined ? {} : { registeredTenants: registered }),
    ...rest,
    files,
  };
  await writeFile(join(outDir, 'results.json'), `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(join(outDir, 'report.html'), renderHtml(result, svgs));
  return { result, outDir };
}
