"""Sentence lengths of built prose (tests/readability.py)."""
import readability as R


def test_sentences_end_at_stops_not_at_abbreviations_or_decimals():
    text = ("The cost is +0.147 nats, e.g. a fifth of a rung. Holm (et al. style) "
            "adjusts it. Does it hold? Yes! 11 seeds say so.")
    assert R.sentences(text) == ["The cost is +0.147 nats, e.g. a fifth of a rung.",
                                 "Holm (et al. style) adjusts it.", "Does it hold?",
                                 "Yes!", "11 seeds say so."]


def test_prose_skips_code_tables_and_math_and_counts_list_items_once():
    html = ("<article><p>One two three. Four five.</p><pre>x = 1. Y = 2.</pre>"
            "<table><tr><td>A b. C d.</td></tr></table>"
            "<ul><li><p>Six seven eight.</p></li><li>Nine ten.</li></ul>"
            "<div class='math'>a. B.</div></article><p>Outside the article.</p>")
    paragraphs = R.prose(html)
    assert paragraphs == ["One two three. Four five.", "Six seven eight.", "Nine ten."]
    assert R.lengths(paragraphs) == [3, 2, 3, 2]
    s = R.summary(paragraphs)
    assert (s["sentences"], s["median"], s["longest"], s["over_40"]) == (4, 2.5, 3, 0)


def test_a_long_sentence_is_counted_as_one():
    long = " ".join(["word"] * 45) + "."
    assert R.summary([long])["over_40"] == 1 and R.summary([])["sentences"] == 0
