// Ticket events onto the board: one task per ticket, decided by planTicket and applied under a per-ticket mutex.
import type { Logger } from '../lib/log.ts';
import { KeyedMutex } from '../lib/mutex.ts';
import type { TaskPort } from './tasks.ts';
import { planTicket, type TicketEvent, type TicketPlan } from './ticket.ts';

/** What an event did to the board. */
export type Outcome = 'created' | 'updated' | 'cancelled' | 'noted' | 'unchanged';

export interface UpsertResult {
  outcome: Outcome | 'replay';
  taskId: string | null;
}

/** Exactly-once bookkeeping of one delivery: checked and written under the ticket's mutex. */
export interface DeliveryGuard {
  /** True when the delivery was handled before (then nothing is done). */
  seen(): boolean;
  /** Record the delivery as handled, after its effect. */
  done(taskId: string | null): Promise<void>;
}

/** Applies ticket events; deliveries and polls of one ticket never interleave. */
export interface TicketSink {
  apply(ev: TicketEvent, guard?: DeliveryGuard): Promise<UpsertResult>;
}

/** The sink over the board: the ticket's task comes from the port's index, so a restart changes nothing. */
export function ticketSink(deps: { tasks: TaskPort; log: Logger }): TicketSink {
  const mutex = new KeyedMutex();
  const act = async (ev: TicketEvent, plan: TicketPlan): Promise<UpsertResult> => {
    const who = { actor: `tracker:${ev.ticket.adapter}`, tenant: deps.tasks.tenant() };
    switch (plan.kind) {
      case 'create': {
        const { adapter, id, url } = ev.ticket;
        const task = await deps.tasks.create({ ...plan.fields, metadata: { ticket: { adapter, id, url } } }, who);
        return { outcome: 'created', taskId: task.id };
      }
      case 'update': {
        const task = await deps.tasks.updateOpen(plan.taskId, plan.fields, who);
        if (!task) deps.log.info(`ticket ${ev.ticket.key || ev.ticket.id}: task ${plan.taskId} left open meanwhile, not updated`);
        return { outcome: task ? 'updated' : 'noted', taskId: plan.taskId };
      }
      case 'cancel': {
        const task = await deps.tasks.cancelOpen(plan.taskId, plan.reason, who);
        if (!task) deps.log.info(`ticket ${ev.ticket.key || ev.ticket.id} closed upstream; task ${plan.taskId} was taken meanwhile and goes on`);
        return { outcome: task ? 'cancelled' : 'noted', taskId: plan.taskId };
      }
      case 'note':
        deps.log.info(`ticket ${ev.ticket.key || ev.ticket.id}: ${plan.why} (task ${plan.taskId ?? 'none'}); left as it is`);
        return { outcome: 'noted', taskId: plan.taskId };
      case 'unchanged':
        return { outcome: 'unchanged', taskId: plan.taskId };
    }
  };
  return {
    apply: (ev, guard) => mutex.run(`${ev.ticket.adapter}\u0000${ev.ticket.id}`, async () => {
      if (guard?.seen()) return { outcome: 'replay', taskId: null };
      const result = await act(ev, planTicket(ev, deps.tasks.byTicket(ev.ticket.adapter, ev.ticket.id)));
      await guard?.done(result.taskId);
      return result;
    }),
  };
}
