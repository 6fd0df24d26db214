"""The value pools a simulated user's profile is drawn from (STORM appendices H, I and J).

Appendix H gives the base profile, behavioural traits and context pools; appendix I the 15 tasks
in 5 categories; appendix J.1 the task-profile pools (preferences, deal breakers, budget
flexibility, payment methods, knowledge, urgency, decision factors). Their values are kept as
the paper lists them; section and key names are ours (snake_case).

The paper had a model write each task's option pools (appendix J.2); the offline generator uses
our own instead, in the data module :mod:`playground.storm.task_pools`.
"""

from __future__ import annotations

#: Appendix H, base profile: ``key -> values``.
BASE: dict[str, tuple[str, ...]] = {
    "age_group": ("18-24", "25-34", "35-44", "45-54", "55-64", "65+"),
    "tech_experience": ("Expert", "Advanced", "Intermediate", "Beginner", "Novice"),
    "language_style": ("Formal", "Casual", "Technical", "Simple", "Professional"),
    "personality": ("Friendly", "Reserved", "Outgoing", "Analytical", "Creative"),
    "culture": ("Western", "Eastern", "Middle Eastern", "African", "Latin American"),
    "decision_style": ("Rational", "Intuitive", "Cautious", "Impulsive", "Balanced"),
    "communication_style": ("Direct", "Indirect", "Detailed", "Concise", "Adaptive"),
    "expressiveness": (
        "Very Expressive",
        "Moderately Expressive",
        "Neutral",
        "Reserved",
        "Very Reserved",
    ),
    "social_context": ("Professional", "Personal", "Academic", "Social", "Mixed"),
    "physical_status": ("Active", "Sedentary", "Limited Mobility", "Athletic", "Average"),
}

#: Appendix H, behavioural traits.
TRAITS: dict[str, tuple[str, ...]] = {
    "patience": ("Very Patient", "Patient", "Moderate", "Impatient", "Very Impatient"),
    "attention_to_detail": ("Very Detailed", "Detailed", "Moderate", "Basic", "Minimal"),
    "risk_tolerance": (
        "Very Risk-Averse",
        "Risk-Averse",
        "Moderate",
        "Risk-Taking",
        "Very Risk-Taking",
    ),
    "adaptability": ("Very Adaptable", "Adaptable", "Moderate", "Resistant", "Very Resistant"),
    "learning_style": ("Visual", "Auditory", "Reading/Writing", "Kinesthetic", "Mixed"),
}

#: Appendix H, contextual factors.
CONTEXT: dict[str, tuple[str, ...]] = {
    "time_constraint": ("Very Urgent", "Urgent", "Moderate", "Flexible", "Very Flexible"),
    "environment": ("Home", "Office", "Public Space", "Mobile", "Mixed"),
    "social_pressure": ("High", "Moderate", "Low", "None", "Mixed"),
    "previous_experience": ("Extensive", "Moderate", "Limited", "None", "Mixed"),
}

#: Appendix I: 5 categories × 3 tasks (category names as in ``model.CATEGORIES``).
TASKS: dict[str, tuple[str, ...]] = {
    "technology": (
        "Buy a smartphone",
        "Reset an online password",
        "Teach my parent to use video calls",
    ),
    "healthcare": (
        "Refill my prescription",
        "Schedule a doctor visit",
        "Find a caregiver for an elderly person",
    ),
    "daily living": (
        "Order groceries online",
        "Set medication reminders",
        "Arrange transportation to a clinic",
    ),
    "housing": (
        "Rent an apartment",
        "Find an accessible home",
        "Arrange home modifications for elderly",
    ),
    "caregiver support": (
        "Book a nurse for my father",
        "Choose a phone for my mom",
        "Find cognitive exercises for dementia prevention",
    ),
}
#: The category of a task that is none of the 15.
CUSTOM_CATEGORY = "custom"

#: Appendix J.1, generic task-profile pools.
MUST_HAVE = (
    "High quality and durability", "Latest technology and features", "Good value for money",
    "Brand reputation", "Ease of use", "Compatibility with existing devices", "Long battery life",
    "Fast performance", "Good customer support", "Warranty coverage", "Environmentally friendly",
    "Customization options", "Future-proof design", "Security features", "User-friendly interface",
    "Portability", "Reliability", "Energy efficiency", "Maintenance requirements", "Upgradeability",
)  # fmt: skip
NICE_TO_HAVE = (
    "Premium design", "Advanced features", "Smart home integration", "Cloud storage",
    "Wireless charging", "Water resistance", "Fingerprint sensor", "Face recognition",
    "AI capabilities", "Virtual assistant", "Gaming features", "Professional tools",
    "Creative software", "Collaboration features", "Remote access", "Backup solutions",
    "Multi-device sync", "Custom themes", "Accessibility features", "Health monitoring",
)  # fmt: skip
DEAL_BREAKERS = (
    "Poor quality", "High maintenance", "Limited warranty", "Poor customer service",
    "Compatibility issues", "Security concerns", "Short lifespan", "Difficult to use",
    "Expensive repairs", "Limited support", "Poor performance", "Battery issues",
    "Overheating problems", "Software bugs", "Privacy concerns", "Limited storage", "Slow updates",
    "Restrictive policies", "Poor connectivity", "Limited customization",
)  # fmt: skip
BUDGET_FLEXIBILITY = (
    "Very flexible - willing to pay more for better quality",
    "Somewhat flexible - can adjust for important features",
    "Moderate - prefer to stay within range but can be convinced",
    "Limited - strict budget constraints",
    "Fixed - cannot exceed budget under any circumstances",
    "Open-ended - quality is more important than cost",
    "Value-focused - looking for best price-performance ratio",
    "Premium - willing to pay for top-tier options",
    "Budget-conscious - seeking best deals",
    "Investment-minded - considering long-term value",
)
PAYMENT_METHODS = (
    "Credit card", "Debit card", "Bank transfer", "PayPal", "Digital wallet", "Cash",
    "Installment plan", "Lease option", "Trade-in", "Gift cards", "Cryptocurrency",
    "Company account", "Financing", "Layaway", "Subscription",
)  # fmt: skip
KNOWLEDGE_LEVELS = (
    "Expert - very knowledgeable in the field",
    "Advanced - good understanding of technical aspects",
    "Intermediate - familiar with basic concepts",
    "Beginner - limited knowledge but eager to learn",
    "Novice - completely new to the subject",
    "Professional - industry experience",
    "Enthusiast - self-taught with practical experience",
    "Student - learning and researching",
    "Casual user - basic understanding",
    "Uncertain - not sure about technical details",
)
URGENCY_LEVELS = (
    "Immediate - needed right away",
    "Urgent - within a few days",
    "Soon - within a week",
    "Planned - within a month",
    "Future - planning ahead",
    "Flexible - no strict timeline",
    "Research phase - gathering information",
    "Comparison phase - evaluating options",
    "Decision phase - ready to choose",
    "Exploratory - just starting to look",
)
DECISION_FACTORS = (
    "Price and budget", "Quality and durability", "Features and functionality",
    "Brand reputation", "User reviews", "Technical specifications", "Design and aesthetics",
    "Ease of use", "Customer support", "Warranty and protection", "Future compatibility",
    "Environmental impact", "Social proof", "Personal preferences", "Professional requirements",
    "Lifestyle fit", "Long-term value", "Maintenance needs", "Security features",
    "Innovation level",
)  # fmt: skip

#: First names by the base profile's culture (single words: a participant's name has no space;
#: the names of the shipped personas are left out so a simulated user never shares one).
NAMES: dict[str, tuple[str, ...]] = {
    "Western": (
        "Emma", "Oliver", "Sophie", "James", "Hannah", "Lucas", "Claire", "Thomas", "Ruth",
        "Henry",
    ),
    "Eastern": (
        "Mei", "Haruto", "Jiwoo", "Wei", "Yuki", "Minh", "Aiko", "Jun", "Priya", "Arjun",
    ),
    "Middle Eastern": (
        "Layla", "Omar", "Yasmin", "Karim", "Noor", "Tariq", "Samira", "Faris", "Leila",
        "Youssef",
    ),
    "African": (
        "Amara", "Kwame", "Zanele", "Tunde", "Nia", "Kofi", "Abebe", "Ayodele", "Chipo", "Themba",
    ),
    "Latin American": (
        "Sofia", "Mateo", "Valentina", "Diego", "Camila", "Joaquin", "Lucia", "Andres", "Isabela",
        "Rafael",
    ),
}  # fmt: skip
