/** Previous / next over keyset pages: the cursors of the pages before are kept to go back. */
export function Pager({ page, hasPrevious, hasMore, onPrevious, onNext }: { page: number; hasPrevious: boolean; hasMore: boolean; onPrevious: () => void; onNext: () => void }) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="secondary" disabled={!hasPrevious} onClick={onPrevious}>
        ← Previous
      </button>
      <span aria-live="polite">Page {page}</span>
      <button type="button" className="secondary" disabled={!hasMore} onClick={onNext}>
        Next →
      </button>
    </nav>
  );
}
