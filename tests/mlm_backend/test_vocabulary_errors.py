"""A checkpoint folder whose tokenizer offers no ordinary token gets a message that says why."""

from __future__ import annotations

import pytest

from glauber.errors import VocabularyError
from glauber.mlm_backend.vocabulary import TokenVocabulary


@pytest.mark.parametrize("ids", [[], [7]])
def test_too_few_tokens_points_at_the_tokenizer_files(ids):
    with pytest.raises(VocabularyError) as info:
        TokenVocabulary(ids, [str(i) for i in ids])
    message = str(info.value)
    assert f"got {len(ids)}" in message and "tokenizer" in message
    assert "vocab.txt" in message  # names the files a folder may lack
