import type { TaskKind } from '../../core/task-params.ts';
import type { ProviderStep, TaskCall, TaskProvider } from '../../core/task-provider.ts';
import { UpstreamRejected } from '../../core/task-provider.ts';

// One ModelArk channel serves several kinds of task, each through its own API: this hands every
// call to the provider of its task's kind. A kind without one fails the task, saying so.

export class ArkProvider implements TaskProvider {
  constructor(private readonly byKind: Partial<Record<TaskKind, TaskProvider>>) {}

  private providerFor(call: TaskCall): TaskProvider {
    const provider = this.byKind[call.task.kind];
    if (!provider) throw new UpstreamRejected('upstream_error', `ModelArk ${call.task.kind} tasks are not supported yet: route ${call.task.model} to another channel`);
    return provider;
  }

  submit(call: TaskCall): Promise<ProviderStep> {
    return this.providerFor(call).submit(call);
  }

  poll(call: TaskCall): Promise<ProviderStep> {
    return this.providerFor(call).poll(call);
  }

  async cancel(call: TaskCall): Promise<{ cancelled: boolean; status?: string }> {
    return (await this.byKind[call.task.kind]?.cancel?.(call)) ?? { cancelled: false, status: 'unsupported' };
  }
}
