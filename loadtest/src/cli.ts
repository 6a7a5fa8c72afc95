import { parseCli, UsageError, USAGE } from './options.js';
import type { RunResult } from './report/results.js';
import type { StageSummary } from './stages.js';
import { runScenario } from './run.js';

const money = (value: number): string => (Number.isFinite(value) ? `$${value.toFixed(3)}` : 'n/a');

/** The results in a few lines for the terminal; the JSON and HTML hold everything. */
function summary(result: RunResult, outDir: string): string {
  const lines = [result.title];
  const lateness = result.delivery?.latenessMs;
  if (result.delivery) {
    const c = result.delivery.counts;
    lines.push(
      `  events: expected ${c.expected}, delivered ${c.delivered}, missing ${c.missing}, duplicated ${c.duplicated}, early ${c.early}, ` +
        `late (> threshold) ${c.late}, unexpected ${c.unexpected}, publish failed ${c.publishFailed}`,
    );
  }
  if (lateness) {
    lines.push(`  lateness ms: p50 ${lateness.p50}  p90 ${lateness.p90}  p99 ${lateness.p99}  p99.9 ${lateness['p99.9']}  max ${lateness.max}  (min ${lateness.min}, mean ${lateness.mean})`);
  }
  for (const [tenant, own] of Object.entries(result.delivery?.byTenant ?? {})) {
    const c = own.counts;
    const l = own.latenessMs;
    const stages = own.stagesMs;
    lines.push(
      `  tenant ${tenant}: expected ${c.expected}, missing ${c.missing}, duplicated ${c.duplicated}, early ${c.early}; ` +
        (l ? `lateness ms p50 ${l.p50}  p90 ${l.p90}  p99 ${l.p99}  max ${l.max}` : 'nothing delivered') +
        (stages
          ? `; received ${stages.receivedBeforeDue.p50} ms before due (p50); p50/p99 ms: received to claim ${stages.receivedToClaim.p50}/${stages.receivedToClaim.p99}, ` +
            `claim ${stages.claimCall.p50}/${stages.claimCall.p99}, publish start after due ${stages.publishStartLateness.p50}/${stages.publishStartLateness.p99}`
          : ''),
    );
  }
  const cpu = result.delivery?.cpu;
  if (cpu) {
    const processes = Object.entries(cpu.byProcess).map(([name, cores]) => `${name} ${cores}`).join(', ');
    lines.push(`  cores busy (of ${cpu.cores}): ${processes}; everything else ${cpu.othersCores} (load average at start ${result.machine.loadAverageAtStart})`);
  }
  const stages = result.delivery?.stagesMs;
  if (stages) {
    lines.push('  stages ms (p50 / p99 / max):');
    const { latest, ...summaries } = stages;
    for (const [name, stage] of Object.entries(summaries) as [string, StageSummary][]) lines.push(`    ${name.padEnd(22)} ${stage.p50} / ${stage.p99} / ${stage.max}`);
    lines.push('  latest events (lateness: received before due, received to claim, claim call, publish start lateness, publish call, to consumer):');
    for (const e of latest.slice(0, 3)) {
      lines.push(
        `    ${e.dueAt} ${e.latenessMs} ms: ${e.receivedBeforeDueMs}, ${e.receivedToClaimMs}, ${e.claimCallMs}, ${e.publishStartLatenessMs}, ${e.publishCallMs}, ${e.publishToConsumerMs}`,
      );
    }
  }
  for (const [key, value] of Object.entries(result.details)) {
    if (key.endsWith('Ms') || key.startsWith('counts')) continue;
    lines.push(`  ${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  }
  if (result.cost) {
    const cost = result.cost;
    lines.push(`  cost per million events (${String(result.details.path ?? '')}, list prices ${cost.pricesAsOf}):`);
    for (const line of cost.lines) if (line.dollars > 0) lines.push(`    ${line.item.padEnd(48)} ${money(line.perMillionEvents)}`);
    lines.push(`    ${'total, the service'.padEnd(48)} ${money(cost.perMillionEvents)}`);
    lines.push(`    ${'not included: client publish to the input topic'.padEnd(48)} ${money(cost.clientInputPublishPerMillion)}`);
    lines.push(`    ${'EventBridge Scheduler + SNS publish'.padEnd(48)} ${money(cost.eventBridgeSchedulerPerMillion)}`);
  }
  lines.push('  targets:');
  for (const target of result.targets) lines.push(`    ${target.met ? 'met ' : 'MISS'}  ${target.name}: ${target.actual} (target ${target.target})`);
  lines.push(`  written to ${outDir}`);
  return lines.join('\n');
}

async function main(): Promise<number> {
  let options;
  try {
    options = parseCli(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
      return 2;
    }
    throw error;
  }
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // Every wait of the run ends by --max-minutes; this ends the process should a stop hang past it.
  setTimeout(() => {
    process.stderr.write(`the run exceeded --max-minutes ${options.maxMinutes}; exiting\n`);
    process.exit(1);
  }, (options.maxMinutes + 5) * 60_000).unref();
  const command = `pnpm --filter @adhoc-scheduler/loadtest loadtest ${process.argv.slice(2).join(' ')}`;
  const { result, outDir } = await runScenario(options, command);
  process.stdout.write(`${summary(result, outDir)}\n`);
  return 0;
}

// Exit explicitly: idle SDK sockets must not hold the process open.
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
