"""Specs of the model-identity tables: who sells (``providers``), who makes (``model_families``), and the hand-kept
overrides of the naming rules (``model_aliases``).

Part of the contract between ``data/`` and the database (``econ.load.tables`` lists every table). The rules that
turn a price key into a canonical model are :mod:`econ.fits.model_identity`; these tables are what the rules cannot
know: which organisation runs a price map's ``provider``, which organisation makes a family of models, and the keys
whose name says nothing reliable (aliases that moved between versions, odd spellings).
"""

from __future__ import annotations

from econ.load.spec import Column, TableSpec

SELLER_KINDS = ("lab", "cloud", "host", "router", "local")
OPEN_WEIGHTS = ("yes", "no")

PROVIDERS = TableSpec(
    name="providers",
    grain="one row per seller name used in the price maps (prices.provider)",
    description="Who runs each seller of the price maps, and what kind of seller it is (a model maker's own API, a "
    "cloud, an inference host, a router, a local runtime)",
    key=("provider",),
    columns=(
        Column("provider", "str", "", "Seller as the price maps name it (prices.provider)", required=True),
        Column(
            "organisation",
            "str",
            "",
            "Organisation that runs the service (model_families.maker spelling, so a maker's own API matches it)",
            required=True,
        ),
        Column(
            "kind",
            "str",
            "",
            "lab: a model maker's own API; cloud: a cloud platform; host: an inference host; router: a gateway that "
            "resells other sellers; local: a local runtime (no per-token price)",
            required=True,
            allowed=SELLER_KINDS,
        ),
        Column("source_url", "str", "", "Page that shows who runs the service", required=True),
        Column(
            "seller",
            "str",
            "",
            "The storefront this name sells through, shared by its names in every map (gemini is google, "
            "bedrock_converse is bedrock): one price per seller and model (econ cost), billing rules (billing_rules."
            "provider). Blank: the provider name itself",
            optional=True,
        ),
        Column("notes", "str", "", "Caveats"),
    ),
)

MODEL_FAMILIES = TableSpec(
    name="model_families",
    grain="one row per model-name prefix (a family of models from one maker)",
    description="Model families by the prefix of their normalised name: the family, the organisation that makes it "
    "and whether its weights are published",
    key=("prefix",),
    columns=(
        Column(
            "prefix",
            "str",
            "",
            "Start of a normalised model name (lower case, '-' between words, '.' in versions); the longest prefix "
            "followed by a non-letter wins",
            required=True,
        ),
        Column("family", "str", "", "Family name (claude-sonnet, gpt, deepseek, llama, ...)", required=True),
        Column(
            "maker", "str", "", "Organisation that makes the family (providers.organisation spelling)", required=True
        ),
        Column(
            "open_weights",
            "str",
            "",
            "yes or no for the whole family; blank when it differs by model (then a Hugging Face repo decides)",
            allowed=OPEN_WEIGHTS,
        ),
        Column("source_url", "str", "", "Maker's page for the family", required=True),
        Column("notes", "str", "", "Caveats"),
    ),
)

MODEL_ALIASES = TableSpec(
    name="model_aliases",
    grain="one row per price key (or normalised name) whose canonical model the rules would get wrong or cannot know",
    description="Hand-kept overrides of the naming rules: a price key mapped to a canonical model, or left unmapped "
    "on purpose (an alias that moved between versions)",
    key=("alias", "provider"),
    columns=(
        Column(
            "alias",
            "str",
            "",
            "A price key as written (prices.model) or its normalised name (price_keys.model_name)",
            required=True,
        ),
        Column("provider", "str", "", "Only for this seller (prices.provider); blank: every seller"),
        Column(
            "canonical_model",
            "str",
            "",
            "Canonical model the key means (model_catalog.canonical_model); blank: leave it unmapped on purpose",
        ),
        Column("reason", "str", "", "Why the rules do not decide this key", required=True),
        Column("source_url", "str", "", "Page that says what the key serves", required=True),
    ),
)
