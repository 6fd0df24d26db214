"""Our own per-task option pools for the offline profile generator (data only).

The STORM paper had a model write each task's option pools (appendix J.2). For the offline
generator we wrote them ourselves (:data:`TASK_POOLS`): per task, a budget range, must-have
requirements and success criteria each in a precise form (with a number or a unit) and a vague
form (without), nice-to-haves, deal breakers and one built-in tension for contradictory
requirements. A task that is not one of the 15 uses :data:`CUSTOM_POOL`, built from the generic
appendix J.1 pools in :mod:`playground.storm.pools`.
"""

from __future__ import annotations

from typing import NamedTuple

from playground.storm.pools import DEAL_BREAKERS, NICE_TO_HAVE


class Phrasing(NamedTuple):
    """One requirement or success criterion, said precisely (with a number or a unit) and
    vaguely (with none). ``{budget}`` in the precise form is the profile's drawn budget."""

    precise: str
    vague: str


class TaskPool(NamedTuple):
    """What the offline generator draws a task's profile from.

    Attributes:
        subject: the task said plainly ("a new smartphone"); ``vague_subject`` said loosely.
        budget: lowest and highest amount in dollars, the step amounts are drawn in, and what
            the amount is for (appended: ``" per hour"``).
        must_have: requirements; ``success``: success criteria.
        nice_to_have, deal_breakers: the task's own versions of the appendix J.1 pools.
        conflict: two wishes that pull against each other (difficulty 4+ states both).
    """

    subject: str
    vague_subject: str
    budget: tuple[int, int, int, str]
    must_have: tuple[Phrasing, ...]
    success: tuple[Phrasing, ...]
    nice_to_have: tuple[str, ...]
    deal_breakers: tuple[str, ...]
    conflict: tuple[str, str]


P = Phrasing

TASK_POOLS: dict[str, TaskPool] = {
    "Buy a smartphone": TaskPool(
        "a new smartphone",
        "a phone thing",
        (150, 1200, 50, ""),
        (
            P("Battery lasting two full days (about 48 hours of mixed use)", "something that doesn't die on me"),
            P("A screen of at least 6.1 inches I can read without glasses", "a screen that's not too tiny"),
            P("At least 128 GB of storage for photos", "enough room for my pictures"),
            P("A camera with at least 48 MP and a night mode", "takes nice photos, I guess"),
            P("Security updates for at least 5 years", "won't be outdated soon"),
        ),
        (
            P("Bought within budget and set up within 3 days", "I end up with a phone I like"),
            P("All contacts and photos moved over in 1 hour", "my stuff is on the new one somehow"),
            P("Works with my carrier and my 2 other devices", "it works with everything, hopefully"),
        ),
        ("Wireless charging", "Water resistance", "Face recognition", "Premium design"),
        ("Battery issues", "Poor customer service", "Limited storage", "Slow updates"),
        ("the newest, most advanced model", "nothing complicated or pricey"),
    ),
    "Reset an online password": TaskPool(
        "to reset my email password",
        "the login thing",
        (0, 40, 5, ""),
        (
            P("Back into my email account within 30 minutes", "get back in soon"),
            P("A new password of at least 12 characters I can remember", "a password I won't forget"),
            P("2-step verification set up on my phone", "something safer, maybe"),
            P("Recovery phone and email updated in 1 visit", "so this doesn't happen again"),
            P("Instructions in no more than 5 steps", "simple instructions"),
        ),
        (
            P("Logged in on my laptop and phone within 1 hour", "I can get into my stuff again"),
            P("0 emails or contacts lost", "nothing gets lost"),
            P("I can do the reset alone next time in under 10 minutes", "I'd manage on my own next time"),
        ),
        ("A password manager", "Fingerprint login", "Backup codes on paper", "Alerts about strange logins"),
        ("Security concerns", "Paying for something I don't need", "Difficult to use", "Privacy concerns"),
        ("maximum security", "no extra steps when I log in"),
    ),
    "Teach my parent to use video calls": TaskPool(
        "to teach my mother video calls",
        "the video call stuff for my mom",
        (0, 300, 25, ""),
        (
            P("Calls started with 1 tap from the home screen", "really easy to start a call"),
            P("Text size of at least 18 pt on the device", "big enough to see"),
            P("Works on the 8-year-old tablet she already has", "works on what she's got"),
            P("A printed guide of at most 1 page", "something she can look at"),
            P("Practice sessions of 20 minutes, twice a week", "some practice, whenever"),
        ),
        (
            P("She starts a call alone 3 times in a row", "she can call me without help"),
            P("Weekly calls with the grandchildren within 2 weeks", "we actually talk more"),
            P("Fewer than 1 help call from her per week", "she stops calling me confused"),
        ),
        ("Captions during calls", "Auto-answer for family", "A bigger screen", "Photo sharing"),
        ("Difficult to use", "New accounts everywhere", "Privacy concerns", "Poor connectivity"),
        ("every feature, so she can do more", "as few buttons as possible"),
    ),
    "Refill my prescription": TaskPool(
        "a refill of my blood pressure pills",
        "my pills thing",
        (0, 80, 5, ""),
        (
            P("Refill ready before I run out in 4 days", "before I run out"),
            P("Pickup within 2 miles, or home delivery", "somewhere close, or they bring it"),
            P("A copay of {budget} with my insurance", "not too expensive"),
            P("A 90-day supply instead of 30 days", "more pills at once, if that's a thing"),
            P("Refill reminders 7 days ahead", "some kind of reminder"),
        ),
        (
            P("Medication in hand within 3 days, 0 missed doses", "I don't miss any pills"),
            P("Done with 1 phone call or 1 app request", "not a big hassle"),
            P("Next refill scheduled every 90 days", "it keeps going by itself"),
        ),
        ("Home delivery", "Text message updates", "A generic version", "Chatting with a pharmacist"),
        ("Long waiting times", "Hidden fees", "Insurance problems", "Privacy concerns"),
        ("it done today", "no trip out of the house"),
    ),
    "Schedule a doctor visit": TaskPool(
        "an appointment with a doctor",
        "seeing someone about it",
        (0, 250, 10, ""),
        (
            P("An appointment within 7 days", "soonish"),
            P("A clinic within 20 minutes of home", "not too far"),
            P("A visit after 5 pm or on a Saturday", "a time that works for me"),
            P("An in-network doctor on my insurance plan (copay $0-$30)", "one my insurance is fine with"),
            P("A 30-minute slot to go over 2 health issues", "enough time to talk"),
        ),
        (
            P("Appointment confirmed in writing within 24 hours", "I have an appointment, I think"),
            P("A reminder 1 day before", "I don't forget to go"),
            P("Out-of-pocket cost known 1 day before the visit", "no surprise bill"),
        ),
        ("A video visit option", "A female doctor", "Online check-in", "Parking on site"),
        ("Long waits for appointments", "Out of network", "Rude staff", "Short-notice cancellations"),
        ("the best specialist in town", "an appointment this week"),
    ),
    "Find a caregiver for an elderly person": TaskPool(
        "a caregiver for my grandfather",
        "some help for grandpa",
        (15, 45, 5, " per hour"),
        (
            P("Care for 4 hours a day, 5 days a week", "someone there a good part of the day"),
            P("At least 2 years of dementia care experience", "someone who knows how to deal with it"),
            P("A background check and CPR certificate (1 year or newer)", "someone trustworthy"),
            P("A rate of {budget}", "affordable"),
            P("Starts within 2 weeks", "soon, ideally"),
        ),
        (
            P("Hired after meeting 3 candidates", "we find someone good"),
            P("The same caregiver for at least 6 months", "it's not always someone new"),
            P("A 15-minute update call every week", "I know how he's doing"),
        ),
        ("Speaks his native language", "Can drive to appointments", "Cooks meals", "Likes pets"),
        ("No background check", "Frequent no-shows", "Poor communication", "Hidden agency fees"),
        ("a highly experienced professional", "the lowest hourly rate"),
    ),
    "Order groceries online": TaskPool(
        "online grocery delivery",
        "food shopping online",
        (50, 200, 10, " per week"),
        (
            P("Delivery within 24 hours of ordering", "comes quickly"),
            P("A delivery fee under $5", "delivery that doesn't cost a lot"),
            P("A 2-hour delivery window in the evening", "they come when I'm home"),
            P("Substitutions only with my approval, 0 surprises", "no weird swaps"),
            P("My weekly order saved to reorder in 1 click", "easy to order the usual"),
        ),
        (
            P("First order delivered complete, 0 missing items", "I get what I ordered"),
            P("Weekly bill within my budget 4 weeks running", "I don't overspend"),
            P("Shopping takes under 15 minutes a week", "less time on groceries"),
        ),
        ("Organic options", "Recipe suggestions", "Loyalty discounts", "Eco-friendly packaging"),
        ("Damaged produce", "Hidden fees", "Late deliveries", "Difficult to use"),
        ("the freshest, best-quality food", "the cheapest prices anywhere"),
    ),
    "Set medication reminders": TaskPool(
        "reminders for my medications",
        "something so I remember my pills",
        (0, 60, 5, ""),
        (
            P("Reminders for 4 medications at 3 times a day", "reminders for my pills"),
            P("An alert I can hear from 2 rooms away", "I actually notice it"),
            P("A log of doses taken over the last 30 days", "some way to see if I took them"),
            P("A refill alert when 5 doses are left", "tells me before I run out"),
            P("Set up in under 15 minutes", "not a big setup"),
        ),
        (
            P("0 missed doses for 2 weeks in a row", "I stop forgetting"),
            P("My daughter gets a text if I miss 1 dose", "someone knows if I forget"),
            P("Reminders work offline for 24 hours", "it just works"),
        ),
        ("Voice reminders", "Pill photos in the app", "Smartwatch alerts", "A report for my doctor"),
        ("Too many notifications", "Subscription fees", "Privacy concerns", "Difficult to use"),
        ("reminders that are impossible to miss", "nothing that beeps at me all day"),
    ),
    "Arrange transportation to a clinic": TaskPool(
        "a ride to my clinic appointment",
        "getting there",
        (0, 60, 5, " per trip"),
        (
            P("Pickup at 8:30 am for a 9:15 am appointment", "get there on time"),
            P("A wheelchair-accessible vehicle with a 1-step ramp", "a car I can get into easily"),
            P("A round trip within {budget}", "not expensive"),
            P("Booked 2 days ahead with a confirmation", "booked for sure"),
            P("The driver waits up to 15 minutes at pickup", "a driver who doesn't rush me"),
        ),
        (
            P("Arrive 10 minutes early for the appointment", "I make it to the appointment"),
            P("A ride home within 30 minutes after the visit", "I get home okay"),
            P("The same service booked for the next 4 visits", "I can keep using it"),
        ),
        ("The same driver each time", "A text when the driver arrives", "Help with bags", "Insurance cover"),
        ("Late pickups", "No accessibility", "Surge pricing", "Rude drivers"),
        ("a private driver waiting for me", "the cheapest option possible"),
    ),
    "Rent an apartment": TaskPool(
        "a one-bedroom apartment to rent",
        "a place",
        (900, 2500, 100, " per month"),
        (
            P("1 bedroom of at least 550 square feet", "enough space for me"),
            P("Rent of {budget}, utilities included", "a rent I can manage"),
            P("A commute of 25 minutes or less", "not too far from work"),
            P("A 12-month lease from the 1st of next month", "moving in around next month"),
            P("In-unit laundry and 1 parking space", "the usual stuff, laundry maybe"),
        ),
        (
            P("Lease signed within 3 weeks", "I find a place in time"),
            P("A deposit of at most 1 month's rent", "no crazy upfront costs"),
            P("At least 4 places viewed before choosing", "I feel sure about it"),
        ),
        ("A balcony", "Pet-friendly", "A gym in the building", "Quiet neighbours"),
        ("Mold or pests", "An unresponsive landlord", "Hidden fees", "An unsafe area"),
        ("a big place in the city centre", "the lowest rent around"),
    ),
    "Find an accessible home": TaskPool(
        "a wheelchair-accessible home",
        "a home that works for me",
        (150000, 450000, 10000, ""),
        (
            P("A step-free entrance and doorways at least 32 inches wide", "easy to get in and around"),
            P("A bedroom and full bathroom on the ground floor (level 0)", "everything on one level, kind of"),
            P("A roll-in shower at least 60 inches wide", "a bathroom I can use"),
            P("A price of {budget}", "a price that's okay"),
            P("Within 5 miles of my hospital", "close to my doctors"),
        ),
        (
            P("Moved in within 4 months", "I move into a place that fits"),
            P("Under $10,000 of changes needed after moving in", "not much to fix"),
            P("Every room reachable alone from day 1", "I can move around by myself"),
        ),
        ("An accessible garden", "An attached garage", "Near public transport", "Smart home controls"),
        ("Stairs at the entrance", "Narrow hallways", "A steep driveway", "High property taxes"),
        ("a fully adapted modern home", "an old house with character"),
    ),
    "Arrange home modifications for elderly": TaskPool(
        "changes to my mother's house so she can stay there",
        "making mom's house safer",
        (2000, 25000, 500, ""),
        (
            P("2 grab bars by the toilet and 2 in the shower", "something to hold on to in the bathroom"),
            P("A stair lift for 14 steps", "help with the stairs"),
            P("Work finished within 6 weeks", "done before it gets worse"),
            P("A licensed contractor with 3 references", "someone reliable"),
            P("A total cost of {budget}", "not a fortune"),
        ),
        (
            P("All changes inspected and signed off in 1 visit", "it's all done properly"),
            P("Mom uses the bathroom and stairs alone from week 1", "she manages on her own"),
            P("0 falls in the first 3 months", "she doesn't fall again"),
        ),
        ("Better lighting", "Non-slip flooring", "Lever door handles", "An emergency call button"),
        ("Unlicensed contractors", "Cost overruns", "Months of delays", "A clinical look"),
        ("everything changed so it's completely safe", "the house shouldn't look any different"),
    ),
    "Book a nurse for my father": TaskPool(
        "a home nurse for my father",
        "someone for dad",
        (30, 90, 5, " per hour"),
        (
            P("A registered nurse 3 times a week", "a nurse who comes by regularly"),
            P("Wound care and 2 insulin shots each visit", "someone who can do the medical stuff"),
            P("Visits between 9 am and 12 pm", "mornings, I think"),
            P("A rate of {budget}", "a price I can handle"),
            P("A nurse who speaks Spanish (level C1 or native)", "someone he can talk to"),
        ),
        (
            P("The first visit within 5 days", "someone actually shows up soon"),
            P("A visit report after each of the 3 weekly visits", "I know what's going on"),
            P("The same nurse for at least 2 months", "dad gets used to them"),
        ),
        ("Weekend visits", "A female nurse", "Online booking", "Insurance cover"),
        ("No license", "Late arrivals", "High agency fees", "Poor communication"),
        ("someone there every day", "only a couple of visits to keep costs down"),
    ),
    "Choose a phone for my mom": TaskPool(
        "a phone for my mom",
        "a phone for mom",
        (100, 700, 25, ""),
        (
            P("Text of at least 20 pt on a 6.5-inch screen", "big letters"),
            P("An SOS button that calls 3 family numbers", "some emergency button"),
            P("A battery lasting 3 days between charges", "doesn't need charging all the time"),
            P("Hearing-aid compatible, rated M4/T4", "works with her hearing aids"),
            P("A price of {budget}", "not expensive"),
        ),
        (
            P("Mom makes and answers calls alone within 1 week", "she can use it herself"),
            P("Family photos open in 1 tap", "she sees the grandkid photos"),
            P("Set up and working within 2 days", "done without a big fuss"),
        ),
        ("A charging dock", "A simplified home screen", "A loud speaker", "Fall detection"),
        ("Tiny buttons", "Complicated menus", "Contract lock-in", "Poor battery"),
        ("a smartphone like everyone else's", "a simple phone with just a few buttons"),
    ),
    "Find cognitive exercises for dementia prevention": TaskPool(
        "brain exercises to help prevent dementia",
        "stuff to keep the mind sharp",
        (0, 30, 5, " per month"),
        (
            P("Sessions of 15-20 minutes, 5 days a week", "something to do regularly"),
            P("Backed by at least 1 published study", "something that actually works"),
            P("Usable on a tablet with text of 18 pt or larger", "easy to read"),
            P("Progress tracked over 12 weeks", "some way to see if it helps"),
            P("A cost of {budget}", "cheap"),
        ),
        (
            P("Done 4 times a week for 8 weeks", "it becomes a habit"),
            P("Memory test score stable or better after 3 months", "memory doesn't get worse"),
            P("Enjoyable enough to rate 4 out of 5", "it's fun, not a chore"),
        ),
        ("Group classes", "Puzzles and word games", "Music-based exercises", "Reports for family"),
        ("Subscription traps", "Too difficult", "Unproven claims", "Ads everywhere"),
        ("a challenging program that really pushes the brain", "something relaxing with no pressure"),
    ),
}  # fmt: skip

#: A task that is none of the 15 (``--task "free text"``): generic requirements after the
#: appendix J.1 must-haves, and J.1's own nice-to-have and deal-breaker pools.
CUSTOM_POOL = TaskPool(
    "",  # the task's own text
    "this thing",
    (0, 1000, 50, ""),
    (
        P("Done within 2 weeks", "done soonish"),
        P("No more than 10% over {budget}", "not too expensive"),
        P("Easy to use: I can handle it alone after 1 try", "easy to use"),
        P("Reliable: works for at least 1 year without problems", "reliable"),
        P("Support that answers within 24 hours", "someone to ask if it goes wrong"),
        P("A warranty or guarantee of at least 12 months", "some kind of guarantee"),
    ),
    (
        P("Finished within 1 month", "it gets done"),
        P("At most 1 follow-up problem", "no headaches afterwards"),
        P("I'd rate the result 4 out of 5 or better", "I'm happy with it"),
    ),
    NICE_TO_HAVE,
    DEAL_BREAKERS,
    ("the best quality there is", "the cheapest option"),
)  # fmt: skip
