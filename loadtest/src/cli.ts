import { describeOutcome, type ChaosReport, type EventEvidence } from './chaos/evidence.js';
import { parseCli, UsageError, USAGE } from './options.js';
import { round, type RunResult } from './report/results.js';
import type { StageSummary } from './stages.js';
import { runScenario } from './run.js';

const money = (value: number): string => (Number.isFinite(value) ? `$${value.toFixed(3)}` : 'n/a');
const seconds = (ms: number): string => `${ms >= 0 ? '+' : ''}${(ms / 1000).toFixed(1)} s`;
/** Events listed on the console; results.json holds them all. */
const CONSOLE_EVENTS = 20;

function eventLine(event: EventEvidence): string {
  const record = event.record;
  const state =
    record === 'none'
      ? 'no record'
      : `record ${record.state} v${record.version} (payload in ${record.payloadKept})` +
        (record.queued === undefined ? '' : `, queued ${seconds(record.queued)}`) +
        (record.emitted === undefined ? '' : `, emitted ${seconds(record.emitted)}`) +
        (record.failed === undefined ? '' : `, failed ${seconds(record.failed)} ${record.reason ?? ''}`);
  const faults = event.faults.map((fault) => `${fault.id} ${fault.service} ${fault.operation} ${fault.kind} ${seconds(fault.msFromDue)}`).join(', ');
  const kills = event.kills.map((kill) => `${kill.n} ${seconds(kill.msFromDue)}`).join(', ');
  return (
    `    ${event.eventId} ${describeOutcome(event.outcome)} (${event.part}, due ${event.dueAt}): ${state}; faults: ${faults || 'none'}; kills: ${kills || 'none'}` +
    (event.inDeadLetterQueue ? '; in the dead-letter queue' : '')
  );
}

/** Kills, faults, and every event missing, early or failed, with the times from its due time. */
function chaosLines(chaos: ChaosReport): string[] {
  const lines = [`  chaos (seed ${chaos.seed}): ${chaos.kills.length} kill -9 and restarts of ${chaos.killsPlanned} planned`];
  for (const kill of chaos.kills) {
    const spike = kill.msFromSpike !== undefined && kill.atSpike ? `, ${kill.msFromSpike} ms from the spike's second` : '';
    lines.push(`    kill ${kill.n} at +${kill.secondsIntoRun} s${spike}: emulators gone after ${kill.emulatorsExitSeconds} s, up again after ${kill.downSeconds} s`);
  }
  const faults = chaos.faults;
  const share = faults.share === undefined ? '' : `, ${(faults.share * 100).toFixed(2)}% of about ${faults.calls.toLocaleString('en-US')} calls`;
  lines.push(`  faults injected (${round(chaos.faultRate * 100, 2)}% asked): ${faults.total} (refused ${faults.refused}, answer lost ${faults.lost})${share}`);
  for (const [service, byOperation] of Object.entries(faults.byService)) {
    lines.push(`    ${service.padEnd(9)} ${Object.entries(byOperation).map(([operation, kinds]) => `${operation} ${kinds.refused}/${kinds.lost}`).join(', ')}  (refused/lost)`);
  }
  lines.push(`  publish requests the run retried: ${chaos.publishRetries}; dead-letter queue: ${chaos.deadLetters.messages} messages ${JSON.stringify(chaos.deadLetters.byKind)}`);
  const queues = Object.entries(chaos.queuesAtEnd).map(([queue, depth]) => `${queue} ${depth.visible}/${depth.inFlight}/${depth.delayed}`);
  lines.push(`  queues at the end (visible/in flight/delayed): ${queues.join(', ')}`);
  const shown = chaos.events.slice(0, CONSOLE_EVENTS);
  const notShown = chaos.events.length - shown.length + chaos.eventsNotShown;
  lines.push(`  missing, early and failed events: ${chaos.events.length + chaos.eventsNotShown}${notShown > 0 ? ` (${notShown} not shown; results.json lists ${chaos.events.length})` : ''}`);
  for (const event of shown) lines.push(eventLine(event));
  const parts = Object.entries(chaos.latenessByPartMs).map(([part, l]) => `${part} ${l.p50} / ${l.p99} / ${l.max} (${l.events})`);
  lines.push(`  lateness by part, ms (p50 / p99 / max, events): ${parts.join('; ')}`);
  lines.push('  the latest events:');
  for (const event of chaos.latest.slice(0, 3)) lines.push(eventLine(event));
  return lines;
}

/** The results in a few lines for the terminal; the JSON and HTML hold everything. */
function summary(result: RunResult, outDir: string): string {
  const lines = [result.title];
  const lateness = result.delivery?.latenessMs;
  if (result.delivery) {
    const c = result.delivery.counts;
    lines.push(
      `  events: expected ${c.expected}, delivered ${c.delivered}, missing ${c.missing}, duplicated ${c.duplicated}, early ${c.early}, ` +
        `failed ${c.failed}${c.failed > 0 ? ` ${JSON.stringify(c.failedByReason)}` : ''}, late (> threshold) ${c.late}, unexpected ${c.unexpected}, publish failed ${c.publishFailed}`,
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
  if (result.chaos) lines.push(...chaosLines(result.chaos));
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
