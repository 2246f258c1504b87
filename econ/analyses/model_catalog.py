"""``model_catalog`` and ``price_keys``: one identity per model across the price sources.

``price_keys`` maps every price key (LiteLLM key, OpenRouter id, first-party name; one row per source x provider x
model x hugging_face_id) to its canonical model, its seller and whether the seller makes the model;
``model_catalog`` has one row per canonical model. The rules are :mod:`econ.fits.model_identity`; what they cannot
know is hand-kept in ``data/providers.csv``, ``data/model_families.csv`` and ``data/model_aliases.csv``. The view
``unmapped_price_keys`` lists the keys no rule maps (never guessed).
"""

from __future__ import annotations

from econ.fits import catalog_rows
from econ.fits import match_rules as mr
from econ.fits import model_identity as mi
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "model_catalog"
INPUTS = ("prices", "models", "providers", "model_families", "model_aliases", "price_match_rules")
KEYS_SQL = "select distinct source, provider, model, hugging_face_id from prices"
READS = {"prices": KEYS_SQL}
"""All it reads of ``prices`` is the set of price keys: a new snapshot that only moves prices keeps its tables
(``econ.analyses.runner``)."""

KEY_COLUMNS = (
    C(
        "source",
        "str",
        "",
        "key",
        "Where the price rows come from: hand, litellm, openrouter, genai_prices or llm_prices",
    ),
    C("provider", "str", "", "key", "Seller of the tokens (prices.provider)"),
    C("model", "str", "", "key", "Model id as the seller names it (prices.model)"),
    C(
        "hugging_face_id",
        "str",
        "",
        "key",
        "Hugging Face repo the price rows name (prices.hugging_face_id; null when none): a key whose rows name "
        "different repos over time (DeepSeek's deepseek-chat) has one row per repo",
    ),
)
CANONICAL = C(
    "canonical_model",
    "str",
    "",
    "derived",
    "Canonical model the key sells (model_catalog.canonical_model); null: unmapped, listed in unmapped_price_keys",
    mi.map_price_keys,
)
IS_FIRST_PARTY = C(
    "is_first_party",
    "bool",
    "",
    "derived",
    "The seller's organisation makes the model (a lab's own API), not a reseller, cloud or router",
    mi.first_party,
)

PRICE_KEYS = ResultTable(
    name="price_keys",
    grain="price key (source x provider x model x hugging_face_id)",
    key=("source", "provider", "model", "hugging_face_id"),
    description=(
        "Every price key mapped to its canonical model, its seller (providers) and the model's maker "
        "(model_families): override (data/model_aliases.csv), else the repo the rows name (hugging_face_id), else "
        "the normalised name when it equals a canonical model's; unmapped keys keep a null canonical_model"
    ),
    columns=(
        *KEY_COLUMNS,
        C(
            "model_name",
            "str",
            "",
            "derived",
            "Normalised name: last path segment, lower case, without tags, regions, vendor prefixes, dates and "
            "precisions, '_' as '-', version dashes as dots",
            mi.model_name,
        ),
        CANONICAL,
        C(
            "match_rule",
            "str",
            "",
            "check",
            "Which rule decided: override, hugging_face_id, hand, first_party, openrouter, hf_path (key ends in a "
            "Hugging Face org/repo), name (equals a canonical model's name), genai_match (a genai-prices entry whose "
            "match rule names keys of one canonical model, price_key_matches); override_unmapped, moving_alias "
            "(-latest without a version), unmapped",
            mi.map_price_keys,
        ),
        C(
            "seller_organisation",
            "str",
            "",
            "input",
            "Organisation running the seller (providers.organisation; null: seller not listed)",
        ),
        C("seller_kind", "str", "", "input", "lab, cloud, host, router or local (providers.kind)"),
        C(
            "maker",
            "str",
            "",
            "derived",
            "Organisation making the model: the maker of the longest model_families prefix of the name",
            mi.family_of,
        ),
        IS_FIRST_PARTY,
        C(
            "rule_matched_keys",
            "int",
            "",
            "check",
            "genai-prices entries: price keys of the same seller in the other sources that the entry's match rule "
            "names (price_key_matches; null: no rule)",
            mr.resolve,
        ),
    ),
)

MODEL_CATALOG = ResultTable(
    name="model_catalog",
    grain="canonical model",
    key=("canonical_model",),
    description=(
        "One row per canonical model the price keys map to (and per architecture in models): family, version, "
        "maker, open weights, the models row when the architecture is known, and how many price keys and sellers "
        "it has (price_keys maps every key to it)"
    ),
    columns=(
        C("canonical_model", "str", "", "key", "Canonical model name (lower case, '-' between words, '.' in versions)"),
        C("family", "str", "", "derived", "Family of the longest model_families prefix (null: unknown)", mi.family_of),
        C("version", "str", "", "derived", "Version in the name after the family (4.5, v3.1, k2.5)", mi.version_of),
        C("maker", "str", "", "derived", "Organisation making the family (model_families.maker)", mi.family_of),
        C(
            "open_weights",
            "bool",
            "",
            "derived",
            "Weights published: true where a Hugging Face repo is known, else the family's yes/no, else null",
            catalog_rows.open_weights,
        ),
        C("hf_repo", "str", "", "input", "Hugging Face repo of the weights (a price row's hugging_face_id or models)"),
        C(
            "arch_model",
            "str",
            "",
            "derived",
            "models.model of the architecture (null: unknown)",
            catalog_rows.model_catalog,
        ),
        C("release_date", "date", "", "input", "Release date of the architecture (models.release_date)"),
        C("price_key_count", "int", "", "check", "Price keys mapped to the model (price_keys rows)"),
        C("seller_count", "int", "", "check", "Distinct sellers (source x provider) of the model"),
        C("first_party_seller_count", "int", "", "check", "Sellers of those that make the model"),
    ),
)
PRICE_KEY_MATCHES = ResultTable(
    name="price_key_matches",
    grain="genai-prices entry x price key of the same seller that its match rule names",
    key=("provider", "model", "matched_source", "matched_provider", "matched_model", "canonical_model"),
    description="genai-prices' match rules resolved to econ's price keys: every key of the same seller in the other "
    "sources that an entry's rule names, and the key's canonical model (one model for all of them gives the entry "
    "its canonical model in price_keys, match_rule = genai_match)",
    columns=(
        C("provider", "str", "", "key", "Seller (prices.provider)"),
        C("model", "str", "", "key", "The genai-prices entry's model id"),
        C("matched_source", "str", "", "key", "Source of the price key the rule names"),
        C("matched_provider", "str", "", "key", "Its seller (the same organisation as the entry's: providers)"),
        C("matched_model", "str", "", "key", "The price key the rule names (prices.model)", mr.rule_matches),
        C(
            "canonical_model",
            "str",
            "",
            "key",
            "Canonical model of that key (price_keys; null: unmapped; a key whose rows name two repos over time has "
            "one row per model)",
        ),
    ),
)
TABLES = (MODEL_CATALOG, PRICE_KEYS, PRICE_KEY_MATCHES)


def run(ctx) -> None:
    keys = ctx.query(KEYS_SQL)
    models = ctx.query("select model, hf_repo, release_date from models")
    families = ctx.query("select * from model_families")
    providers = ctx.query("select provider, organisation, kind as seller_kind from providers")
    aliases = ctx.query("select * from model_aliases")
    mapping = mi.map_price_keys(keys, models=models, families=families, providers=providers, aliases=aliases)
    rules = ctx.query("select * from price_match_rules where source = 'genai_prices'")
    pairs = mr.matches(mapping, rules)  # read once: applying the rules changes none of the keys they are read against
    mapping = mr.apply(mapping, rules, pairs=pairs)
    ctx.write(PRICE_KEY_MATCHES, pairs.unique().sort("provider", "model", "matched_provider", "matched_model"))
    ctx.write(PRICE_KEYS, mapping)
    ctx.write(MODEL_CATALOG, catalog_rows.model_catalog(mapping, models=models, families=families))
