const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']

export function isLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
}

/** A read position in a timestamp; each method consumes what it recognises. */
export class Cursor {
  pos = 0
  /** Digits read by the last `digits` call. */
  count = 0
  constructor(readonly text: string) {}

  peek(): number {
    return this.text.charCodeAt(this.pos)
  }
  next(): void {
    this.pos++
  }
  atEnd(): boolean {
    return this.pos >= this.text.length
  }
  eat(code: number): boolean {
    if (this.text.charCodeAt(this.pos) !== code) return false
    this.pos++
    return true
  }
  skipSpaces(): boolean {
    const start = this.pos
    while (this.text.charCodeAt(this.pos) === 0x20) this.pos++
    return this.pos > start
  }
  /** Up to `max` digits; NaN when there are none. Sets `count`. */
  digits(max: number): number {
    const text = this.text
    let value = 0
    let count = 0
    let c = text.charCodeAt(this.pos)
    while (count < max && c >= 0x30 && c <= 0x39) {
      value = value * 10 + (c - 0x30)
      count++
      c = text.charCodeAt(++this.pos)
    }
    this.count = count
    return count === 0 ? Number.NaN : value
  }
  year(): number {
    const y = this.digits(4)
    if (this.count === 4) return y
    if (this.count === 2) return y < 70 ? 2000 + y : 1900 + y
    return Number.NaN
  }
  /** Month 1-12 from an English name or its 3-letter abbreviation; 0 when there is none. */
  monthName(): number {
    const start = this.pos
    while (isLetter(this.peek())) this.pos++
    const word = this.text.slice(start, this.pos).toLowerCase()
    const index = word.length >= 3 ? MONTHS.indexOf(word.slice(0, 3)) : -1
    return index + 1
  }
  /** Digits after the decimal point, truncated to milliseconds. */
  fractionMs(): number {
    const f = this.digits(3)
    const count = this.count
    if (count === 0) return Number.NaN
    this.digits(64)
    return count === 3 ? f : count === 2 ? f * 10 : f * 100
  }
  /** 1 for AM, 2 for PM, 0 when absent. */
  meridiem(): number {
    if (this.word('am')) return 1
    if (this.word('pm')) return 2
    return 0
  }
  word(lower: string): boolean {
    if (this.text.slice(this.pos, this.pos + lower.length).toLowerCase() !== lower) return false
    this.pos += lower.length
    return true
  }
}
