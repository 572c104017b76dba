"""Public antibody variable-domain sequences used as default states for the protein models,
and a public T-cell receptor for the SCEPTR models.

Variable domains (VH, VL) of two therapeutic antibodies, from these sources:

- Trastuzumab (Herceptin, anti-HER2), humanised 4D5: Carter et al., "Humanization of an
  anti-p185HER2 antibody for human cancer therapy", PNAS 89 (1992) 4285-4289; Fab structure in
  complex with HER2, Cho et al., Nature 421 (2003) 756-760, PDB 1N8Z.
- Pertuzumab (Perjeta, anti-HER2, humanised 2C4): Franklin et al., "Insights into ErbB
  signaling from the structure of the ErbB2-pertuzumab complex", Cancer Cell 5 (2004) 317-328,
  PDB 1S78.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from glauber.errors import InvalidParameterError, SequenceLengthError

TRASTUZUMAB_VH = (
    "EVQLVESGGGLVQPGGSLRLSCAASGFNIKDTYIHWVRQAPGKGLEWVARIYPTNGYTRYADSVKGRFTISADTSKNTAYLQ"
    "MNSLRAEDTAVYYCSRWGGDGFYAMDYWGQGTLVTVSS"
)
TRASTUZUMAB_VL = (
    "DIQMTQSPSSLSASVGDRVTITCRASQDVNTAVAWYQQKPGKAPKLLIYSASFLYSGVPSRFSGSRSGTDFTLTISSLQPEDF"
    "ATYYCQQHYTTPPTFGQGTKVEIK"
)
PERTUZUMAB_VH = (
    "EVQLVESGGGLVQPGGSLRLSCAASGFTFTDYTMDWVRQAPGKGLEWVADVNPNSGGSIYNQRFKGRFTLSVDRSKNTLYLQ"
    "MNSLRAEDTAVYYCARNLGPSFYFDYWGQGTLVTVSS"
)
PERTUZUMAB_VL = (
    "DIQMTQSPSSLSASVGDRVTITCKASQDVSIGVAWYQQKPGKAPKLLIYSASYRYTGVPSRFSGSGSGTDFTLTISSLQPEDF"
    "ATYYCQQYYIYPYTFGQGTKVEIK"
)

#: Name -> sequence of every shipped chain (heavy chains end in ``_vh``, light in ``_vl``).
ANTIBODY_SEQUENCES: dict[str, str] = {
    "trastuzumab_vh": TRASTUZUMAB_VH,
    "trastuzumab_vl": TRASTUZUMAB_VL,
    "pertuzumab_vh": PERTUZUMAB_VH,
    "pertuzumab_vl": PERTUZUMAB_VL,
}
#: A reaction SMILES for the reaction models (rxnmapper, rxnfp): the example of rxnmapper
#: 0.4.3's README, an aromatic substitution of 2,3-difluoropyridine by propane-2-thiol with
#: potassium carbonate in DMF (54 tokens of their vocabulary).
REACTION_SMILES = "CC(C)S.CN(C)C=O.Fc1cccnc1F.O=C([O-])[O-].[K+].[K+]>>CC(C)Sc1ncccc1F"

#: A paired human TCR from SCEPTR's documentation (sceptr 1.2.0, the first TCR of the example
#: of ``sceptr.model.ResidueRepresentations``): TRAV38-1*01 with CDR3A CAHRSAGGGTSYGKLTF and
#: TRBV2*01 with CDR3B CASSEFQGDNEQFF. Written loop by loop, CDR1A/CDR2A/CDR3A/CDR1B/CDR2B/CDR3B,
#: the CDR1 and CDR2 loops being the IMGT loops of those V alleles (what libtcrlm reads through
#: tidytcells 2.2). 57 residues; the CDR3B is positions 44-57.
SCEPTR_EXAMPLE_TCR = "TSENNYY/QEAYKQQN/CAHRSAGGGTSYGKLTF/SNHLY/FYNNEI/CASSEFQGDNEQFF"
#: Name -> TCR of every shipped T-cell receptor (a context of the SCEPTR models).
TCR_SEQUENCES: dict[str, str] = {"sceptr_example": SCEPTR_EXAMPLE_TCR}
#: Every sequence a ``--context`` may name: the antibody chains, the TCR and the reaction
#: (``reaction``).
SHIPPED_CONTEXTS: dict[str, str] = {**ANTIBODY_SEQUENCES, **TCR_SEQUENCES,
                                    "reaction": REACTION_SMILES}

#: The 20 standard amino acids in one-letter code, alphabetical (AntiBERTy's token order).
AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"


def antibody_states(model: Any, names: Sequence[str] | None = None) -> torch.Tensor:
    """The shipped chains as a batch of states ``[k, n]`` for an amino-acid model.

    Each chain is cut to its first ``model.n`` residues (to the shortest chain's length while
    ``model.n`` is None), so heavy and light chains fit one batch.

    Parameters
    ----------
    model : HFMaskedLM or CausalLMControl
        A model whose ``encode`` accepts amino-acid strings (AntiBERTy, Sapiens).
    names : sequence of str, optional
        Keys of :data:`ANTIBODY_SEQUENCES`; default all of them.

    Raises
    ------
    InvalidParameterError
        If a name is not a shipped chain.
    SequenceLengthError
        If ``model.n`` is longer than a chosen chain.
    """
    names = list(ANTIBODY_SEQUENCES) if names is None else list(names)
    unknown = [k for k in names if k not in ANTIBODY_SEQUENCES]
    if unknown:
        raise InvalidParameterError(
            f"unknown chain(s) {unknown}; shipped chains: {', '.join(ANTIBODY_SEQUENCES)}"
        )
    length = model.n if model.n is not None else min(len(ANTIBODY_SEQUENCES[k]) for k in names)
    short = [k for k in names if len(ANTIBODY_SEQUENCES[k]) < length]
    if short:
        raise SequenceLengthError(
            f"chain(s) {short} are shorter than n = {length} residues; use n <= "
            f"{min(len(ANTIBODY_SEQUENCES[k]) for k in names)} or other chains"
        )
    return torch.stack([model.encode(ANTIBODY_SEQUENCES[k][:length]) for k in names])


def natural_states(model: Any) -> torch.Tensor | None:
    """The shipped antibody chains cut to ``model.n`` for a model over the 20 amino acids, else
    None.

    While ``model.n`` is None every chain is cut to the shortest one (:func:`antibody_states`).

    This is what :meth:`TokenSequenceModel.default_states` answers, so
    :func:`glauber.certify.certify` examines real sequences of AntiBERTy and Sapiens (and of an
    amino-acid causal control) by default; other vocabularies get None (the caller then draws random
    states).

    Raises
    ------
    SequenceLengthError
        If the model is an amino-acid model longer than every shipped chain (pass your own states).
    """
    labels = getattr(model, "labels", None)
    if labels is None or sorted(labels) != sorted(AMINO_ACIDS):
        return None
    names = [
        k for k, chain in ANTIBODY_SEQUENCES.items() if model.n is None or len(chain) >= model.n
    ]
    if not names:
        longest = max(len(chain) for chain in ANTIBODY_SEQUENCES.values())
        raise SequenceLengthError(
            f"no shipped antibody chain has n = {model.n} residues (the longest has {longest}); "
            f"use --length <= {longest} or pass your own sequences with --states FILE"
        )
    return antibody_states(model, names)


__all__ = [
    "AMINO_ACIDS",
    "ANTIBODY_SEQUENCES",
    "REACTION_SMILES",
    "SCEPTR_EXAMPLE_TCR",
    "TCR_SEQUENCES",
    "SHIPPED_CONTEXTS",
    "antibody_states",
    "natural_states",
    "PERTUZUMAB_VH",
    "PERTUZUMAB_VL",
    "TRASTUZUMAB_VH",
    "TRASTUZUMAB_VL",
]
