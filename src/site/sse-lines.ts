/**
 * Incremental reader of a server-sent-events body: feed text chunks, get the `data` of each complete
 * event (multi-line data joined with "\n"; comments, ids and event names ignored). Pure, no IO.
 */
export class SseLines {
  private buf = '';
  private data: string[] = [];

  /** The data of every event completed by this chunk. */
  push(chunk: string): string[] {
    this.buf += chunk;
    const out: string[] = [];
    let nl: number;
    while ((nl = this.buf.search(/\r\n|\r|\n/)) >= 0) {
      // A lone CR at the end may be the first half of a CRLF split across chunks.
      if (nl === this.buf.length - 1 && this.buf.endsWith('\r')) break;
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + (this.buf.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (this.data.length) out.push(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
    }
    return out;
  }

  /** The data of a last event the body ended without a blank line after. */
  end(): string[] {
    const rest = this.buf.startsWith('data:') ? [this.buf.slice(this.buf.startsWith('data: ') ? 6 : 5)] : [];
    const data = [...this.data, ...rest];
    this.buf = '';
    this.data = [];
    return data.length ? [data.join('\n')] : [];
  }
}
