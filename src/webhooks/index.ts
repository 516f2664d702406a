export { createWebhooks, type Webhooks, type WebhooksDeps } from './setup.ts';
export { taskPort, ticketOf, type TaskPort } from './tasks.ts';
export { type HookSessions, hookLine } from './routes-hooks.ts';
export { type PollSweepResult } from './poll-plan.ts';
export { TRACKERS, trackerRegistry } from './trackers/registry.ts';
export { type TrackerAdapter } from './trackers/types.ts';
export { type Ticket, type TicketEvent } from './ticket.ts';
