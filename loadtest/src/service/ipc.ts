import type { LocalOutputs } from '@adhoc-scheduler/infra';
import type { SchedulerConfig } from '@adhoc-scheduler/shared';
import type { LocalServiceOptions } from './local-options.js';
import type { ServiceReport } from './probe.js';

/** Messages between the harness and the service's child process. */
export type ToService =
  | { readonly type: 'start'; readonly options: Omit<LocalServiceOptions, 'logFile'> }
  | { readonly type: 'report'; readonly id: number; readonly withTimeline: boolean }
  | { readonly type: 'stop' };

export type FromService =
  | { readonly type: 'ready'; readonly outputs: LocalOutputs; readonly config: SchedulerConfig }
  | { readonly type: 'report'; readonly id: number; readonly report: ServiceReport }
  | { readonly type: 'stopped' }
  | { readonly type: 'failed'; readonly error: string };
