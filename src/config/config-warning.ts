/** A configuration finding that is not an error; logged once at startup (§12.6 item 3). */
export interface ConfigWarning {
  readonly level: 'warn' | 'info';
  /** The flag or variable concerned. */
  readonly subject: string;
  readonly message: string;
}
