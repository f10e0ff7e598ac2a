// Charts fit their box: the box's width comes from the page (never from the plot inside it), and the plot is made
// exactly that wide (axes included) when drawn and again whenever the box is resized, e.g. with the window.
import type uPlot from 'uplot'

/** Sizes `plot` to `box`'s width now and on every resize (then calls `onResize`); returns the function that stops it. */
export function fitPlot(plot: uPlot, box: HTMLElement, height: number, onResize?: (width: number) => void): () => void {
  const fit = () => {
    const width = Math.floor(box.clientWidth)
    if (width <= 0 || width === plot.width) return
    plot.setSize({ width, height })
    onResize?.(width)
  }
  fit()
  const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(fit)
  observer?.observe(box)
  return () => observer?.disconnect()
}
