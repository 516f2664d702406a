import { join } from 'node:path';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { KeyedMutex } from '../lib/mutex.ts';
import { createAppenders, readJsonl, type Appenders } from '../store/index.ts';
import { flatError } from './errors.ts';

/** Sends the welcome mail of a new subscriber. */
export interface Mailer {
  sendWelcome(to: string): Promise<void>;
}

/** What /api/notify answers in `status`. */
export type NotifyStatus = 'subscribed' | 'already_subscribed' | 'noop';

// The original's basic x@y.z check; at most 254 characters (the SMTP path limit).
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The address trimmed and lowercased, or null when it is not an address. */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  return email.length <= 254 && EMAIL.test(email) ? email : null;
}

/** Subscribers in `<dataDir>/subscribers.jsonl` (one `{email, subscribed_at}` per line), deduplicated in memory. */
export class Subscribers {
  private readonly emails = new Set<string>();
  private readonly locks = new KeyedMutex();

  private constructor(private readonly file: string, private readonly appender: Appenders, private readonly deps: { clock: Clock; mailer: Mailer | null; log: Logger }) {}

  /** Load the list (a torn last line is skipped). */
  static async open(dataDir: string, deps: { clock: Clock; mailer: Mailer | null; log: Logger }): Promise<Subscribers> {
    const file = join(dataDir, 'subscribers.jsonl');
    const s = new Subscribers(file, createAppenders(), deps);
    for (const rec of await readJsonl<{ email?: unknown }>(file).catch(() => [])) {
      if (typeof rec?.email === 'string') s.emails.add(rec.email);
    }
    return s;
  }

  get size(): number {
    return this.emails.size;
  }

  /**
   * Subscribe a normalised address. Known → already_subscribed. New: with a mailer the welcome is sent
   * first (a refused send → 502 upstream and nothing stored, so a retry can succeed), without one the
   * address is stored and the answer is `noop` (no mail sent).
   */
  subscribe(email: string): Promise<NotifyStatus> {
    return this.locks.run(email, async () => {
      if (this.emails.has(email)) return 'already_subscribed';
      const { mailer, log, clock } = this.deps;
      if (mailer) {
        try {
          await mailer.sendWelcome(email);
        } catch (err) {
          log.warn(`welcome mail not sent: ${(err as Error).message}`);
          throw flatError(502, 'upstream', 'The mail server refused the message');
        }
      }
      await this.appender.append(this.file, JSON.stringify({ email, subscribed_at: clock.iso() }));
      this.emails.add(email);
      return mailer ? 'subscribed' : 'noop';
    });
  }

  close(): Promise<void> {
    return this.appender.close();
  }
}
