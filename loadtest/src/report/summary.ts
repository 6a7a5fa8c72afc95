import { verdict } from '../exit.js';
import type { StageSummary } from '../stages.js';
import type { DeliveryCounts } from '../tracker.js';
import { chaosLines } from './chaos-summary.js';
import type { RunResult } from './results.js';

const money = (value: number): string => (Number.isFinite(value) ? `$${value.toFixed(3)}` : 'n/a');
const count = (value: number): string => value.toLocaleString('en-US');
const ms = (value: number | undefined): string => (value === undefined ? 'n/a' : `${value} ms`);
/** The shapes of DynamoDB writes the summary lists, most units first (results.json holds them all). */
const SHAPES_SHOWN = 8;

/** The counts, saying why more events are expected than the scenario measures: the warm-up ones sent first. */
function eventsLine(c: DeliveryCounts): string {
  const expected =
    c.warmup > 0
      ? `expected ${count(c.expected)} (${count(c.expected - c.warmup)} measured and ${count(c.warmup)} warm-up events sent first, checked like the others but not in the lateness figures)`
      : `expected ${count(c.expected)}`;
  return (
    `  events: ${expected}, delivered ${count(c.delivered)}, missing ${c.missing}, duplicated ${c.duplicated}, early ${c.early} (published early ${c.earlyPublished}), ` +
    `failed ${c.failed}${c.failed > 0 ? ` ${JSON.stringify(c.failedByReason)}` : ''}, late (> threshold) ${c.late}, unexpected ${c.unexpected}, publish failed ${c.publishFailed}`
  );
}

/** The results in a few lines for the terminal, ending with what the targets make of the exit code; the JSON and HTML hold everything. */
export function summary(result: RunResult, outDir: string, failOnMiss = false): string {
  const lines = [result.title];
  const registered = result.registeredTenants;
  if (registered) {
    lines.push(
      `  registered tenants: ${count(registered.count)} more, by tenant import in ${registered.importSeconds.toFixed(1)} s; the service took the last one's first event ${registered.inForceSeconds.toFixed(1)} s later, before the load`,
    );
  }
  const lateness = result.delivery?.latenessMs;
  if (result.delivery) lines.push(eventsLine(result.delivery.counts));
  if (lateness) {
    lines.push(
      `  lateness ms: p50 ${lateness.p50}  p90 ${lateness.p90}  p99 ${lateness.p99}  p99.9 ${lateness['p99.9']}  max ${lateness.max}  (min ${lateness.min}, mean ${lateness.mean})`,
    );
  }
  for (const [tenant, own] of Object.entries(result.delivery?.byTenant ?? {})) {
    const c = own.counts;
    const l = own.latenessMs;
    const stages = own.stagesMs;
    lines.push(
      `  tenant ${tenant}: expected ${count(c.expected)}, missing ${c.missing}, duplicated ${c.duplicated}, early ${c.early}; ` +
        (l ? `lateness ms p50 ${l.p50}  p90 ${l.p90}  p99 ${l.p99}  max ${l.max}` : 'nothing delivered') +
        (stages
          ? `; received ${stages.receivedBeforeDue.p50} ms before due (p50); publish start after due p50/p99 ${stages.publishStartLateness.p50}/${stages.publishStartLateness.p99} ms`
          : ''),
    );
  }
  const cpu = result.delivery?.cpu;
  if (cpu) {
    const processes = Object.entries(cpu.byProcess)
      .map(([name, cores]) => `${name} ${cores}`)
      .join(', ');
    lines.push(
      `  cores busy (of ${cpu.cores}): ${processes}; everything else ${cpu.othersCores} (load average at start ${result.machine.loadAverageAtStart})`,
    );
  }
  const loopDelay = result.delivery?.harnessLoopDelayMs;
  if (loopDelay)
    lines.push(
      `  the harness's own event loop late by (p50 / p99 / max) ${loopDelay.p50} / ${loopDelay.p99} / ${loopDelay.max} ms, in every receive time it stamped`,
    );
  const stages = result.delivery?.stagesMs;
  if (stages) {
    lines.push(
      '  stages ms (p50 / p99 / max); lateness = publishStartLateness + publishStartToConsumer, which is publishStartToQueue + queueToConsumer:',
    );
    const { mostLate, ...summaries } = stages;
    for (const [name, stage] of Object.entries(summaries) as [string, StageSummary][])
      lines.push(`    ${name.padEnd(22)} ${stage.p50} / ${stage.p99} / ${stage.max}`);
    lines.push('  most late events, most late first:');
    for (const e of mostLate.slice(0, 3)) {
      lines.push(
        `    due ${e.dueAt}, ${e.latenessMs} ms late: queued ${ms(e.queuedBeforeDueMs)} before due, received ${ms(e.receivedBeforeDueMs)} before due, publish started ${ms(e.publishStartLatenessMs)} after due, ` +
          `publish call ${ms(e.publishCallMs)}, publish start to consumer ${ms(e.publishStartToConsumerMs)} ` +
          `(to its queue ${ms(e.publishStartToQueueMs)}, queue to consumer ${ms(e.queueToConsumerMs)})`,
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
  const delivered = result.delivery?.counts.delivered ?? 0;
  const byKind = Object.entries(result.usage?.dynamodb.writeUnitsByItemKind ?? {}).filter(([, units]) => units > 0);
  if (delivered > 0 && byKind.length > 0) {
    const perEvent = byKind.sort(([, a], [, b]) => b - a).map(([kind, units]) => `${kind} ${(units / delivered).toFixed(2)}`);
    lines.push(`  DynamoDB write units per delivered event, by item written: ${perEvent.join(', ')}`);
  }
  const byShape = Object.entries(result.usage?.dynamodb.writesByShape ?? {}).filter(([, shape]) => shape.units > 0);
  if (delivered > 0 && byShape.length > 0) {
    lines.push('  DynamoDB writes by shape (units per delivered event; writes; units a write):');
    for (const [shape, { requests, units }] of byShape.sort(([, a], [, b]) => b.units - a.units).slice(0, SHAPES_SHOWN))
      lines.push(`    ${shape.padEnd(60)} ${(units / delivered).toFixed(3)}  ${requests}  ${(units / requests).toFixed(2)}`);
  }
  lines.push('  targets:');
  for (const target of result.targets)
    lines.push(`    ${target.met ? 'met ' : 'MISS'}  ${target.name}: ${target.actual} (target ${target.target})`);
  lines.push(`  ${verdict(result.targets, failOnMiss).line}`);
  lines.push(`  written to ${outDir}`);
  return lines.join('\n');
}
