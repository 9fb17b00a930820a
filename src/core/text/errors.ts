// Errors of the text codecs. Both name the offending field so the route can answer a 400 that says it.

export class TextFormatError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = new.target.name;
  }
}

/** The inbound body is not a valid request of its format. */
export class InvalidTextField extends TextFormatError {}

/** The request carries something the target format cannot express, and dropping it could change the answer. */
export class UntranslatableField extends TextFormatError {}
