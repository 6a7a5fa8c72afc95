import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricName, SchedulerMetrics } from '../app/ports/process.js';

export const METRICS_NAMESPACE = 'AdhocScheduler';

/** CloudWatch metrics as Embedded Metric Format log lines: no API call on the hot path. */
export class EmfMetrics implements SchedulerMetrics {
  private readonly metrics: Metrics;

  constructor(serviceName: string) {
    this.metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
  }

  count(name: MetricName, value = 1, reason?: string): void {
    if (value === 0) return;
    if (reason === undefined) {
      this.metrics.addMetric(name, MetricUnit.Count, value);
      return;
    }
    const single = this.metrics.singleMetric();
    single.addDimension('reason', reason);
    single.addMetric(name, MetricUnit.Count, value);
  }

  latenessMs(value: number): void {
    this.metrics.addMetric('EmitLatenessMs', MetricUnit.Milliseconds, value);
  }

  loaderBacklogSeconds(value: number): void {
    this.metrics.addMetric('LoaderBacklogSeconds', MetricUnit.Seconds, value);
  }

  flush(): void {
    if (this.metrics.hasStoredMetrics()) this.metrics.publishStoredMetrics();
  }
}

/** No metrics: where EMF is off (the local runtime, and SCHEDULER_METRICS_ENABLED=false). */
export const noMetrics: SchedulerMetrics = { count: () => {}, latenessMs: () => {}, loaderBacklogSeconds: () => {}, flush: () => {} };
